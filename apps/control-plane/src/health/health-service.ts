import { type AdminState, type HealthEvent, type LiveEvidence, transition } from "@linewatch/core";
import { dueHealthTicks, getLineHealth, lockLineHealth, type StoredProbeResult, writeHealthIfUnchanged } from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { RegistryCache } from "../registry-cache";
import type { TablePublisher } from "../tables/publisher";
import { afterTransition, type FollowUpParts } from "./after-transition";
import { applyEvents, type HealthMachine } from "./apply-events";
import { HealthFaults } from "./health-faults";
import { HealthRows } from "./health-rows";
import { LinePolicies } from "./line-policies";
import { ProbeBatches } from "./probe-batches";

/** An event the health machine could not apply to a line (counted in HealthFaults). */
export class UnappliedEvent extends Error {
  constructor(line: string, type: HealthEvent["type"], cause: unknown) {
    super(`cannot apply a ${type} event to line ${line}`, { cause });
    this.name = "UnappliedEvent";
  }
}

/**
 * The shell around core's state machine: load a line's health, apply events, persist the new health
 * with its events atomically, then act on the other effects (a confirming probe, a table republish).
 *
 * Every event goes through one apply path (applyEvents: transitions, fail-safe, the write) and one
 * write statement (writeHealthIfUnchanged). Probe results, the hot path, go in group commits
 * (ProbeBatches, compare-and-set); admin changes, live judgments and time-driven ticks go one line
 * at a time under its row lock.
 */
export class HealthService implements HealthMachine {
  /** Results it could not apply, and the lines the fail-safe took out (/readyz, metrics). */
  readonly faults: HealthFaults;
  /** Core's state machine; replaceable in tests, to inject a fault the fail-safe must hold against. */
  transition: typeof transition = transition;
  private readonly policies = new LinePolicies();
  private readonly rows: HealthRows;
  private readonly probes: ProbeBatches;
  private readonly followUp: FollowUpParts;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger" | "config">,
    private readonly registry: RegistryCache,
    publisher: TablePublisher,
  ) {
    this.faults = new HealthFaults(deps.logger);
    this.rows = new HealthRows(deps.database);
    this.probes = new ProbeBatches({ deps, registry, policies: this.policies, rows: this.rows, machine: this });
    this.followUp = { deps, registry, policies: this.policies, publisher };
  }

  /** Resolves once the result is applied: health written, confirming probe asked for, tables republished. */
  async applyProbe(result: StoredProbeResult): Promise<void> {
    const { error, moved } = await this.probes.apply(result);
    if (error) {
      const line = (await this.registry.get()).lines.get(result.lineId);
      this.faults.record({ id: result.lineId, name: line?.name ?? result.lineId }, 1, error, this.deps.clock.now(), false);
      throw error;
    }
    // Outside the batch: the next batch need not wait for this one's republish.
    if (moved) await afterTransition(this.followUp, moved);
  }

  /**
   * A judgment of the line's live traffic (docs/live-evidence.md): the health machine counts it next to the
   * probes; its confirming probes arrive as probe results of their own.
   */
  async applyLive(lineId: string, evidence: LiveEvidence): Promise<void> {
    const { verdict, probes } = evidence;
    if (!verdict.suspect) {
      // A clean judgment only ends a suspect spell: a line with none (the usual case, at every report
      // of every router) costs one read, not a locked write. Timers are the ticks' work either way.
      const row = await getLineHealth(this.deps.database.db, lineId);
      if (row?.health && row.health.liveSuspectSince === null) return;
    }
    await this.step(lineId, {
      type: "live",
      suspect: verdict.suspect,
      reason: verdict.reason,
      probeIds: probes.filter((p) => !p.passed).map((p) => p.id),
    });
  }

  async applyAdmin(lineId: string, adminState: AdminState): Promise<void> {
    await this.step(lineId, { type: "admin", adminState });
  }

  /** Time-driven transitions (cooldown over, probation step, hold expiry) of every line that is due. */
  async runTicks(limit = 200): Promise<number> {
    const due = await dueHealthTicks(this.deps.database.db, new Date(this.deps.clock.now()), limit);
    for (const lineId of due) {
      // One line whose tick cannot be applied (counted in faults) must not hold back the others.
      await this.step(lineId, { type: "tick" }).catch((error: unknown) => {
        if (!(error instanceof UnappliedEvent)) throw error;
      });
    }
    return due.length;
  }

  /** One event to one line, under its row lock: the apply path, its write, then its effects. */
  private async step(lineId: string, event: HealthEvent): Promise<void> {
    const snapshot = await this.registry.get();
    const line = snapshot.lines.get(lineId);
    if (!line) return; // deleted meanwhile
    const { policy } = this.policies.of(snapshot, line);
    const db = this.deps.database.db;
    const now = this.deps.clock.now();
    await this.rows.ensure([line], () => policy, now);
    const moved = await db.transaction(async (tx) => {
      const row = await lockLineHealth(tx, lineId);
      if (!row) return null;
      const applied = applyEvents(this, { line, policy, row, events: [event], now });
      if (!applied.ok) throw new UnappliedEvent(line.name, event.type, applied.error);
      // Under the row lock the revision is still the one read: the write lands.
      await writeHealthIfUnchanged(tx, [applied.write], applied.eventRows);
      return applied.moved;
    });
    if (!moved) {
      this.rows.forget(lineId); // the row is gone (its line deleted)
      return;
    }
    await afterTransition(this.followUp, moved);
  }
}
