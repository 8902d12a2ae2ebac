import { LINE_SCORE_WINDOW_MS, lineScore } from "@linewatch/core";
import { type EventInsert, type HealthForProbes, readHealthForProbes, type StoredProbeResult, writeHealthIfUnchanged } from "@linewatch/db";
import type { AppDeps } from "../deps";
import { GroupCommit } from "../prober/group-commit";
import type { CachedLine, RegistrySnapshot } from "../registry-cache";
import { applyEvents, type HealthMachine, type HealthWrite, type Moved } from "./apply-events";
import type { HealthRows } from "./health-rows";
import type { LinePolicies } from "./line-policies";

/** What became of one result: applied (with what to do next, on a line's last result of a batch), or the error. */
export interface ProbeApplied {
  error?: unknown;
  moved?: Moved;
}

/** Reads and writes of a batch before giving up on lines whose health keeps changing under it. */
const CAS_ATTEMPTS = 5;

/** A line of the batch's snapshot: a batch only keeps results whose line the snapshot has. */
function lineIn(snapshot: RegistrySnapshot, id: string): CachedLine {
  const line = snapshot.lines.get(id);
  if (!line) throw new Error(`line ${id} is not in the registry snapshot its batch was grouped by`);
  return line;
}

/** core's lineScore over per-sample sums: n results of mean m count as one of weight w·n (Σ w·score is the same). */
function lineScoreOf(sums: HealthForProbes["sums"], now: number): number | null {
  return lineScore(
    sums.map((x) => ({
      startedAt: now,
      score: x.scoreSum / x.count,
      weight: (Number.isFinite(x.weight) && x.weight > 0 ? x.weight : 0) * x.count,
    })),
    now,
  );
}

/**
 * Probe results, the hot path, applied in group commits: the results that arrive while one batch is
 * being written are applied together, each line's in arrival order, with two statements per batch:
 * one reads the lines' health and line-score inputs, one writes health and events back where the
 * revision is still the one read (compare-and-set; lines somebody wrote meanwhile are read and
 * applied again). A batch that fails is retried one result at a time, so one bad line cannot hold
 * back the others.
 */
export class ProbeBatches {
  private readonly probes: GroupCommit<StoredProbeResult, ProbeApplied>;

  constructor(
    private readonly parts: {
      deps: Pick<AppDeps, "database" | "clock" | "config">;
      registry: { get(): Promise<RegistrySnapshot> };
      policies: LinePolicies;
      rows: HealthRows;
      machine: HealthMachine;
    },
  ) {
    this.probes = new GroupCommit((results) => this.flush(results), { lingerMs: parts.deps.config.batchLingerMs });
  }

  /** Resolves once the result's batch is written (or could not be). */
  apply(result: StoredProbeResult): Promise<ProbeApplied> {
    return this.probes.add(result);
  }

  private async flush(results: StoredProbeResult[]): Promise<ProbeApplied[]> {
    // Results whose health is written (with what to do next, for a line's last one) survive a
    // failure later in the batch; the others are tried again one by one.
    const applied = new Map<StoredProbeResult, Moved | null>();
    const errors = new Map<StoredProbeResult, unknown>();
    try {
      await this.applyBatch(results, applied);
    } catch (error) {
      const only = results.length === 1 ? results[0] : undefined;
      if (only) errors.set(only, error);
      else for (const r of results) if (!applied.has(r)) await this.applyBatch([r], applied).catch((e: unknown) => errors.set(r, e));
    }
    return results.map((r) => (errors.has(r) ? { error: errors.get(r) } : { moved: applied.get(r) ?? undefined }));
  }

  /**
   * Apply a batch: read the lines' health with their line-score inputs (one statement), run the
   * apply path, write health and events back (one statement) where nobody wrote meanwhile, and go
   * again for the lines somebody did. For each line, its last result carries what to do next.
   */
  private async applyBatch(results: StoredProbeResult[], applied: Map<StoredProbeResult, Moved | null>): Promise<void> {
    const snapshot = await this.parts.registry.get();
    const byLine = new Map<string, StoredProbeResult[]>();
    for (const r of results) {
      if (!snapshot.lines.has(r.lineId)) {
        applied.set(r, null); // deleted meanwhile
        continue;
      }
      const list = byLine.get(r.lineId) ?? [];
      list.push(r);
      byLine.set(r.lineId, list);
    }
    let pending = [...byLine.keys()].sort();
    if (pending.length === 0) return;
    await this.parts.rows.ensure(
      pending.map((id) => lineIn(snapshot, id)),
      (line) => this.parts.policies.of(snapshot, line).policy,
      this.parts.deps.clock.now(),
    );
    const db = this.parts.deps.database.db;
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > CAS_ATTEMPTS) throw new Error(`health of ${pending.length} line(s) kept changing under this batch`);
      const now = this.parts.deps.clock.now();
      const rows = await readHealthForProbes(db, pending, new Date(now - LINE_SCORE_WINDOW_MS), new Date(now));
      const read = new Set(rows.map((row) => row.lineId));
      for (const id of pending) {
        if (read.has(id)) continue;
        this.parts.rows.forget(id); // gone (line deleted): nothing to apply
        for (const r of byLine.get(id) ?? []) applied.set(r, null);
      }
      const judged = this.judgeRows(snapshot, rows, byLine, applied, now);
      const written = await writeHealthIfUnchanged(db, judged.writes, judged.eventRows);
      for (const id of written) {
        const mine = byLine.get(id) ?? [];
        for (const [i, r] of mine.entries()) applied.set(r, i === mine.length - 1 ? (judged.moved.get(id) ?? null) : null);
      }
      pending = rows.map((row) => row.lineId).filter((id) => !written.has(id) && !judged.dropped.has(id));
    }
  }

  /** Each read line's results through the apply path: what to write, or (results it could not apply, not failing) nothing. */
  private judgeRows(
    snapshot: RegistrySnapshot,
    rows: HealthForProbes[],
    byLine: Map<string, StoredProbeResult[]>,
    applied: Map<StoredProbeResult, Moved | null>,
    now: number,
  ) {
    const writes: HealthWrite[] = [];
    const eventRows: EventInsert[] = [];
    const moved = new Map<string, Moved>();
    const dropped = new Set<string>();
    for (const row of rows) {
      const line = lineIn(snapshot, row.lineId);
      const { policy, intervalMs, sampleIds } = this.parts.policies.of(snapshot, line);
      const score = lineScoreOf(row.sums, now);
      const mine = byLine.get(row.lineId) ?? [];
      const events = mine.map((result) => ({ type: "probe" as const, result, lineScore: score ?? result.score, intervalMs, sampleIds }));
      const outcome = applyEvents(this.parts.machine, { line, policy, row, events, now });
      if (!outcome.ok) {
        for (const r of mine) applied.set(r, null); // counted; nothing to write
        dropped.add(line.id);
        continue;
      }
      writes.push(outcome.write);
      eventRows.push(...outcome.eventRows);
      moved.set(line.id, outcome.moved);
    }
    return { writes, eventRows, moved, dropped };
  }
}
