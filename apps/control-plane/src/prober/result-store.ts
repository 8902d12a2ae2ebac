import type { Sample } from "@linewatch/core";
import {
  type ClaimCompletion,
  completeClaims,
  errorSummary,
  type ProbeResultInsert,
  type StoredProbeResult,
  storeProbeResults,
} from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { CachedLine } from "../registry-cache";
import type { BaselineCache } from "./baseline-cache";
import { GroupCommit } from "./group-commit";

/** What a probe leaves to store: its result (none when it could not run) and, if claimed, its claim to hand back. */
export interface Store {
  input: ProbeResultInsert | null;
  completion: ClaimCompletion | null;
}

/** Attempts (a second apart) to hand a claim back while the database is unreachable. */
const HAND_BACK_ATTEMPTS = 120;

/**
 * Stores probe results with the claims they hand back, in group commits (one statement per batch),
 * then hands each stored result on (baselines, health, metrics).
 */
export class ResultStore {
  private readonly stores: GroupCommit<Store, StoredProbeResult | null>;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "logger" | "config">,
    private readonly replica: string,
    private readonly baselines: BaselineCache,
    private readonly hooks: {
      /** Called with every stored result (health, metrics). Errors are logged, never lost silently. */
      onResult(result: StoredProbeResult): Promise<void>;
      /** The prober is closing: stop retrying. */
      closed(): boolean;
    },
  ) {
    const db = deps.database.db;
    this.stores = new GroupCommit(
      (items) =>
        storeProbeResults(
          db,
          items.flatMap((i) => (i.input ? [i.input] : [])),
          { replica: this.replica, items: items.flatMap((i) => (i.completion ? [i.completion] : [])) },
        ).then((stored) => {
          let k = 0;
          return items.map((i) => (i.input ? (stored[k++] ?? null) : null));
        }),
      { lingerMs: deps.config.batchLingerMs },
    );
  }

  /**
   * Store a result with the claim it hands back (one group commit), then apply it (health,
   * metrics). A claim that cannot be handed back is retried alone until the database takes it.
   */
  async store(line: CachedLine, sample: Sample, item: Store): Promise<StoredProbeResult | null> {
    let result: StoredProbeResult | null;
    try {
      result = await this.stores.add(item);
    } catch (error) {
      if (item.input)
        this.deps.logger.error("cannot store a probe result", { line: line.name, sample: sample.name, ...errorSummary(error) });
      const completion = item.completion;
      if (completion) await this.handBack(() => completeClaims(this.deps.database.db, this.replica, [completion]), line.name, sample.name);
      return null;
    }
    if (!result) return null;
    this.baselines.record(line.id, sample.id, {
      startedAt: result.startedAt,
      contentLength: result.contentLength,
      latencyMs: result.latencyMs,
      passed: result.passed,
      contentHash: result.contentHash,
      hardFailure: result.hardFailure,
    });
    await this.hooks
      .onResult(result)
      .catch((error: unknown) =>
        this.deps.logger.error("cannot apply a probe result", { line: line.name, sample: sample.name, ...errorSummary(error) }),
      );
    return result;
  }

  /**
   * Hand a claim back with its next due time. While the database is down keep trying, once a
   * second (the slot stays taken meanwhile): a claim left behind would stop this (line, sample)
   * until its lease ends, and the same slot would then be probed a second time.
   */
  private async handBack(complete: () => Promise<unknown>, line: string, sample: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await complete();
        return;
      } catch (error) {
        if (attempt === 1) this.deps.logger.error("cannot reschedule a probe; retrying", { line, sample, ...errorSummary(error) });
        if (this.hooks.closed() || attempt >= HAND_BACK_ATTEMPTS) return;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }
}
