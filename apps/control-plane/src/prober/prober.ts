import { type Health, type Sample, isFastProbing, jitterOffsetMs, probeIntervalMs, sampleOffsetsMs } from "@linewatch/core";
import {
  type ScheduleRow,
  type StoredProbeResult,
  claimDueProbes,
  completeClaim,
  deleteScheduleRow,
  insertScheduleRows,
  healthOfLines,
  listSchedule,
} from "@linewatch/db";
import pLimit from "p-limit";
import type { Agent } from "undici";
import type { AppDeps } from "../deps";
import { type CachedLine, type RegistryCache, applicableSamples } from "../registry-cache";
import { runProbe, probeTimeoutMs } from "./run-probe";
import { createProbeAgent } from "./send-probe";
import { StallMeter } from "./stall-meter";

export interface ProberHooks {
  /** Called with every stored result (health, metrics). Errors are logged, never lost silently. */
  onResult(result: StoredProbeResult): Promise<void>;
}

export interface ProberStats {
  inFlight: number;
  peakInFlight: number;
  sent: number;
}

/** Attempts (a second apart) to hand a claim back while the database is unreachable. */
const HAND_BACK_ATTEMPTS = 120;

/** Lines that are probed: active and drained (SPEC §5); disabled lines are not. */
const isProbed = (line: CachedLine) => line.adminState !== "disabled";

/**
 * Sends probes: on schedule (claimed from the shared schedule, so replicas never double up) and on
 * demand. At most `maxInFlight` at once; each bounded by its timeout.
 */
export class Prober {
  readonly agent: Agent = createProbeAgent();
  private readonly stall = new StallMeter();
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly stats_: ProberStats = { inFlight: 0, peakInFlight: 0, sent: 0 };
  private readonly running = new Set<Promise<unknown>>();
  readonly replica: string;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger" | "config">,
    private readonly registry: RegistryCache,
    private readonly hooks: ProberHooks,
    private readonly rng: () => number = Math.random,
  ) {
    this.limit = pLimit(deps.config.maxInFlight);
    this.replica = deps.config.replicaId ?? `cp-${process.pid}-${Math.floor(rng() * 1e9).toString(36)}`;
  }

  stats(): ProberStats {
    return { ...this.stats_ };
  }

  /** Probe a line now with every sample that applies; returns the stored results. */
  async probeNow(lineId: string): Promise<StoredProbeResult[]> {
    const snapshot = await this.registry.get();
    const line = snapshot.lines.get(lineId);
    if (!line) return [];
    const samples = applicableSamples(line, snapshot.samples.values());
    const results = await Promise.all(samples.map((sample) => this.limit(() => this.send(line, sample, "manual", null))));
    return results.filter((r): r is StoredProbeResult => r !== null);
  }

  /**
   * Make the schedule match the registry: a row per (probed line, applicable sample), spread across
   * the line's interval from a random start, and none for anything else.
   */
  async reconcile(): Promise<void> {
    const db = this.deps.database.db;
    const snapshot = await this.registry.get();
    const now = this.deps.clock.now();
    const existing = await listSchedule(db);
    const have = new Set(existing.map((r) => `${r.lineId}/${r.sampleId}`));
    const want = new Set<string>();
    const inserts: { lineId: string; sampleId: string; nextAt: Date }[] = [];
    for (const line of snapshot.lines.values()) {
      if (!isProbed(line)) continue;
      const samples = applicableSamples(line, snapshot.samples.values());
      const interval = probeIntervalMs(line, samples.length);
      if (!Number.isFinite(interval)) continue;
      const offsets = sampleOffsetsMs(jitterOffsetMs(this.rng, interval), interval, samples.length);
      samples.forEach((sample, k) => {
        const key = `${line.id}/${sample.id}`;
        want.add(key);
        if (!have.has(key)) inserts.push({ lineId: line.id, sampleId: sample.id, nextAt: new Date(now + (offsets[k] ?? 0)) });
      });
    }
    await insertScheduleRows(db, inserts);
    for (const row of existing) {
      if (!want.has(`${row.lineId}/${row.sampleId}`)) await deleteScheduleRow(db, row.lineId, row.sampleId);
    }
  }

  /** One scheduler tick: claim what is due, as many as there are free slots, and send it. */
  async runDue(): Promise<number> {
    const free = this.deps.config.maxInFlight - this.limit.activeCount - this.limit.pendingCount;
    if (free <= 0) return 0;
    const now = this.deps.clock.now();
    const snapshot = await this.registry.get();
    // The lease covers the longest timeout a probe may take, plus slack for storing the result.
    const maxTimeout = Math.max(10_000, ...[...snapshot.lines.values()].map((l) => l.timeoutMs ?? 0), ...[...snapshot.samples.values()].map((s) => s.timeoutMs ?? 0));
    const claimed = await claimDueProbes(this.deps.database.db, this.replica, new Date(now), new Date(now + maxTimeout + 30_000), free);
    if (claimed.length === 0) return 0;
    const fast = await this.fastLines(claimed.map((r) => r.lineId));
    for (const row of claimed) {
      const task = this.limit(() => this.runClaimed(row, fast.has(row.lineId)));
      this.running.add(task);
      void task.finally(() => this.running.delete(task));
    }
    return claimed.length;
  }

  /** Which of these lines probe at the fast interval (after a trend alert, not in cooldown). */
  private async fastLines(lineIds: string[]): Promise<Set<string>> {
    const now = this.deps.clock.now();
    const rows = await healthOfLines(this.deps.database.db, [...new Set(lineIds)]);
    return new Set(rows.filter((r) => isFastProbing(r.health as unknown as Health, now)).map((r) => r.lineId));
  }

  private async runClaimed(row: ScheduleRow, fast: boolean): Promise<void> {
    const snapshot = await this.registry.get();
    const line = snapshot.lines.get(row.lineId);
    const sample = snapshot.samples.get(row.sampleId);
    const db = this.deps.database.db;
    if (!line || !sample || !isProbed(line)) {
      await deleteScheduleRow(db, row.lineId, row.sampleId);
      return;
    }
    const slot = row.nextAt.getTime();
    try {
      await this.send(line, sample, row.trigger, slot);
    } finally {
      const samples = applicableSamples(line, snapshot.samples.values());
      const now = this.deps.clock.now();
      const interval = probeIntervalMs(line, samples.length, { fast });
      // Keep the cadence of regular slots; a confirming probe does not shift it. Never schedule into the past.
      const base = row.trigger === "confirm" ? now : slot;
      let next = base + interval;
      if (next <= now) next = now + jitterOffsetMs(this.rng, Math.min(interval, 5_000));
      await this.handBack(() => completeClaim(db, this.replica, row.lineId, row.sampleId, row.nextAt, new Date(next)), line.name, sample.name);
    }
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
        if (attempt === 1) this.deps.logger.error("cannot reschedule a probe; retrying", { line, sample, error: String(error) });
        if (attempt >= HAND_BACK_ATTEMPTS) return;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }

  private async send(line: CachedLine, sample: Sample, trigger: string, slot: number | null): Promise<StoredProbeResult | null> {
    this.stats_.inFlight++;
    this.stats_.peakInFlight = Math.max(this.stats_.peakInFlight, this.stats_.inFlight);
    this.stats_.sent++;
    try {
      const result = await runProbe(this.deps, this.agent, { line, apiKey: line.apiKey, sample, trigger, slot }, this.stall);
      if (result) {
        await this.hooks.onResult(result).catch((error: unknown) =>
          this.deps.logger.error("cannot apply a probe result", { line: line.name, sample: sample.name, error: String(error) }),
        );
      }
      return result;
    } catch (error) {
      this.deps.logger.error("probe failed to run", { line: line.name, sample: sample.name, timeoutMs: probeTimeoutMs(line, sample), error: String(error) });
      return null;
    } finally {
      this.stats_.inFlight--;
    }
  }

  /** Wait for the probes under way (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  async close(): Promise<void> {
    await this.drain();
    this.stall.stop();
    await this.agent.close();
  }
}
