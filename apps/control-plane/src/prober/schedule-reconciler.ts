import { jitterOffsetMs, probeIntervalMs, samplePhases, slotAtOrAfter } from "@linewatch/core";
import { deleteScheduleRow, insertScheduleRows, listScheduleKeys, setSchedulePhases } from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { CachedLine, RegistrySnapshot } from "../registry-cache";
import type { BaselineCache } from "./baseline-cache";
import type { LineSamples } from "./line-samples";

/** Lines that are probed: active and drained (docs/health.md); disabled lines are not. */
export const isProbed = (line: CachedLine) => line.adminState !== "disabled";

/**
 * The longest interval the schedule holds. The API refuses a budget past a day per sample (docs/tables.md);
 * a line stored before that (or with thousands of samples) may still ask for more, and a date that
 * far out is invalid: such a line is left out and reported, the others are scheduled as usual.
 */
export const MAX_SCHEDULE_MS = 365 * 86_400_000;

/** A reconcile that finds the registry as the last one did skips the database, for at most this long. */
const RECONCILE_FULL_MS = 60_000;

/** A schedule row the registry asks for: its phase (core's slots.ts) and the interval its first slot is at. */
interface Wanted {
  lineId: string;
  sampleId: string;
  phase: number;
  intervalMs: number;
}

/** Keeps the shared schedule what the registry asks for. */
export class ScheduleReconciler {
  private reconciled: { want: Set<string>; at: number } | null = null;
  /** Lines left out of the schedule because their interval is too long to schedule (reported once each). */
  private unschedulable = new Set<string>();

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger">,
    private readonly registry: { get(): Promise<RegistrySnapshot> },
    private readonly samples: LineSamples,
    private readonly baselines: BaselineCache,
    private readonly rng: () => number,
  ) {}

  /** Ids of the lines the last reconcile could not schedule. */
  unschedulableLines(): string[] {
    return [...this.unschedulable];
  }

  /**
   * Make the schedule match the registry: a row per (probed line, applicable sample), spread across
   * the line's interval from a random start (each row's phase), and none for anything else. When the registry asks
   * for what it asked for last time, the database is left alone (at most RECONCILE_FULL_MS).
   */
  async reconcile(): Promise<void> {
    const db = this.deps.database.db;
    const snapshot = await this.registry.get();
    const now = this.deps.clock.now();
    const want = this.wanted(snapshot);
    const last = this.reconciled;
    if (last && now - last.at < RECONCILE_FULL_MS && last.want.size === want.size && [...want.keys()].every((k) => last.want.has(k)))
      return;
    const existing = await listScheduleKeys(db);
    const have = new Set(existing.map((r) => `${r.lineId}/${r.sampleId}`));
    const inserts = [...want.entries()]
      .filter(([k]) => !have.has(k))
      .map(([, w]) => ({
        lineId: w.lineId,
        sampleId: w.sampleId,
        phase: w.phase,
        nextAt: new Date(slotAtOrAfter(now, w.phase, w.intervalMs)),
      }));
    await insertScheduleRows(db, inserts);
    // Rows stored before phases take the spread ones; their slots move there as they are handed back.
    const phaseless = existing.flatMap((r) => {
      const w = r.phase === null ? want.get(`${r.lineId}/${r.sampleId}`) : undefined;
      return w ? [{ lineId: w.lineId, sampleId: w.sampleId, phase: w.phase }] : [];
    });
    await setSchedulePhases(db, phaseless);
    for (const row of existing) {
      if (!want.has(`${row.lineId}/${row.sampleId}`)) await deleteScheduleRow(db, row.lineId, row.sampleId);
    }
    this.baselines.retain((lineId, sampleId) => want.has(`${lineId}/${sampleId}`));
    this.reconciled = { want: new Set(want.keys()), at: now };
  }

  /** The rows the registry asks for, by `line/sample`; lines that cannot be scheduled are left out and reported once. */
  private wanted(snapshot: RegistrySnapshot): Map<string, Wanted> {
    const want = new Map<string, Wanted>();
    const unschedulable = new Set<string>();
    for (const line of snapshot.lines.values()) {
      if (!isProbed(line)) continue;
      const samples = this.samples.of(snapshot, line);
      const interval = probeIntervalMs(line, samples.length);
      if (!(interval <= MAX_SCHEDULE_MS)) {
        unschedulable.add(line.id);
        if (!this.unschedulable.has(line.id))
          this.deps.logger.warn(
            "line cannot be scheduled: its probe budget stretches the interval too far; fix dailyQuota or probeBudgetPct",
            { line: line.name, intervalSec: interval / 1000 },
          );
        continue;
      }
      // A random start per line (lines do not all probe at once), its samples spread evenly from it.
      const phases = samplePhases(jitterOffsetMs(this.rng, interval) / interval, samples.length);
      for (const [k, sample] of samples.entries())
        want.set(`${line.id}/${sample.id}`, { lineId: line.id, sampleId: sample.id, phase: phases[k] ?? 0, intervalMs: interval });
    }
    this.unschedulable = unschedulable;
    return want;
  }
}
