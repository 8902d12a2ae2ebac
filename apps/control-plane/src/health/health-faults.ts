import { errorSummary } from "@linewatch/db";
import type { Logger } from "../logger";

/** What /readyz and the metrics tell of the health machine's faults on this replica. */
export interface HealthFaultCounts {
  /** Probe results (and live judgments) the health machine could not apply. */
  unappliedResults: number;
  /** Lines the fail-safe sent to cooldown because a failing result could not be applied. */
  failSafeCooldowns: number;
  last: { at: string; line: string; error: string } | null;
}

/** A line's fault is logged at most this often; the counts carry the rest. */
const LOG_EVERY_MS = 60_000;

/**
 * The results the health machine could not apply (docs/health.md#fail-safe): counted, the last one kept,
 * logged once a minute per line, so a fault that repeats at probe rate does not flood the log.
 */
export class HealthFaults {
  private unapplied = 0;
  private failSafe = 0;
  private last: HealthFaultCounts["last"] = null;
  private readonly loggedAt = new Map<string, { at: number; since: number }>();

  constructor(private readonly logger: Pick<Logger, "error">) {}

  /** `results` of `line` were not applied; `failSafe`: the line went to cooldown instead. */
  record(line: { id: string; name: string }, results: number, error: unknown, now: number, failSafe: boolean): void {
    this.unapplied += results;
    if (failSafe) this.failSafe++;
    const summary = errorSummary(error);
    this.last = { at: new Date(now).toISOString(), line: line.name, error: summary.error };
    const logged = this.loggedAt.get(line.id);
    if (logged && now - logged.at < LOG_EVERY_MS) {
      logged.since += results;
      return;
    }
    this.loggedAt.set(line.id, { at: now, since: 0 });
    this.logger.error("cannot apply a line's health; counted", {
      line: line.name,
      results,
      failSafe,
      ...(logged?.since ? { moreSinceLastLog: logged.since } : {}),
      ...summary,
    });
  }

  counts(): HealthFaultCounts {
    return { unappliedResults: this.unapplied, failSafeCooldowns: this.failSafe, last: this.last };
  }
}
