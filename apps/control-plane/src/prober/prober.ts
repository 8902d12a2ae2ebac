import { anchoredLength, applicableSamples, jitterOffsetMs, probeIntervalMs, type Sample, sampleOffsetsMs } from "@linewatch/core";
import {
  type ClaimCompletion,
  type ClaimedProbe,
  claimDueProbesWithContext,
  completeClaims,
  deleteScheduleRow,
  errorSummary,
  heartbeatAndReleaseDead,
  insertScheduleRows,
  listScheduleKeys,
  type ProbeResultInsert,
  type StoredProbeResult,
  storeProbeResults,
} from "@linewatch/db";
import pLimit from "p-limit";
import { median } from "simple-statistics";
import type { Agent } from "undici";
import type { AppDeps } from "../deps";
import type { CachedLine, RegistryCache, RegistrySnapshot } from "../registry-cache";
import { BaselineCache } from "./baseline-cache";
import { GroupCommit } from "./group-commit";
import { probeTimeoutMs, sendAndScore } from "./run-probe";
import { createProbeAgent } from "./send-probe";
import { StallMeter } from "./stall-meter";

export interface ProberHooks {
  /** Called with every stored result (health, metrics). Errors are logged, never lost silently. */
  onResult(result: StoredProbeResult): Promise<void>;
  /** Called as a claimed probe starts, with how late it is after its due time (ms): the prober's backlog. */
  onStart?(lateMs: number): void;
}

export interface ProberStats {
  inFlight: number;
  peakInFlight: number;
  sent: number;
}

/**
 * A replica beats every 2 s (scheduler.ts); one not heard from for REPLICA_STALE_MS is taken for
 * dead and its claims are released, so the probes it had in flight run again within SPEC §6's
 * bound (2 intervals + timeout) instead of after a lease of the longest timeout + 30 s.
 */
export const REPLICA_STALE_MS = 10_000;

/** The usual lengths a probe's answer is held to (chars; null when unknown). */
interface ProbeLengths {
  anchoredLength: number | null;
  peerLength: number | null;
}

/** Attempts (a second apart) to hand a claim back while the database is unreachable. */
const HAND_BACK_ATTEMPTS = 120;

/** Lines that are probed: active and drained (SPEC §5); disabled lines are not. */
const isProbed = (line: CachedLine) => line.adminState !== "disabled";

/**
 * The longest interval the schedule holds. The API refuses a budget past a day per sample (SPEC §6);
 * a line stored before that (or with thousands of samples) may still ask for more, and a date that
 * far out is invalid: such a line is left out and reported, the others are scheduled as usual.
 */
const MAX_SCHEDULE_MS = 365 * 86_400_000;

/** A reconcile that finds the registry as the last one did skips the database, for at most this long. */
const RECONCILE_FULL_MS = 60_000;

/** What a probe leaves to store: its result (none when it could not run) and, if claimed, its claim to hand back. */
interface Store {
  input: ProbeResultInsert | null;
  completion: ClaimCompletion | null;
}

/**
 * Sends probes: on schedule (claimed from the shared schedule, so replicas never double up) and on
 * demand. At most `maxInFlight` at once; each bounded by its timeout.
 *
 * The hot path is built for a thousand lines on a small share of one core (bench/probe-throughput):
 * - one statement claims a batch and says, per probe, whether its line probes fast and whether
 *   another replica stored a result the in-memory baseline lacks (then one more reads those);
 * - a probe's baseline comes from memory (BaselineCache), not from the results table;
 * - results and the claims they hand back are written in group commits: one statement per batch;
 * - a slot is freed when the answer is scored, not when it is stored, and freed slots are refilled
 *   at once while due work remains: throughput is bounded by `maxInFlight` ÷ latency, not by the
 *   one-second tick.
 */
export class Prober {
  readonly agent: Agent;
  private readonly stall = new StallMeter();
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly stats_: ProberStats = { inFlight: 0, peakInFlight: 0, sent: 0 };
  private readonly running = new Set<Promise<unknown>>();
  private readonly baselines = new BaselineCache();
  private readonly stores: GroupCommit<Store, StoredProbeResult | null>;
  /** The claim under way (ticks and refills take turns), and whether the last one left due work behind. */
  private claiming: Promise<number> | null = null;
  private moreDue = false;
  /** Probes claimed or asked for and not yet sent, plus those being sent. */
  private busy = 0;
  private closed = false;
  private leaseOf: { snapshot: RegistrySnapshot; ms: number } | null = null;
  private samplesOf_: { snapshot: RegistrySnapshot; byLine: Map<string, Sample[]> } | null = null;
  private mates_: { snapshot: RegistrySnapshot; byRoute: Map<string, string[]> } | null = null;
  /** Anchored usual lengths (chars) per line/sample, as the claims brought them from health: the peers of a line. */
  private readonly anchors = new Map<string, number>();
  private reconciled: { want: Set<string>; at: number } | null = null;
  /** Since when this replica's own heartbeats have gone through without a gap (null: not now). */
  private beatingSince: number | null = null;
  private lastBeat = Number.NEGATIVE_INFINITY;
  /** Lines left out of the schedule because their interval is too long to schedule (reported once each). */
  private unschedulable = new Set<string>();
  readonly replica: string;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger" | "config" | "dnsLookup">,
    private readonly registry: RegistryCache,
    private readonly hooks: ProberHooks,
    private readonly rng: () => number = Math.random,
  ) {
    this.agent = createProbeAgent(deps.config.allowUpstreamHosts, deps.dnsLookup);
    this.limit = pLimit(deps.config.maxInFlight);
    this.replica = deps.config.replicaId ?? `cp-${process.pid}-${Math.floor(rng() * 1e9).toString(36)}`;
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

  stats(): ProberStats {
    return { ...this.stats_ };
  }

  /**
   * Tell the other replicas this one is alive, and release the claims of those that stopped
   * beating. Only a replica whose own beats have gone through for a whole stale period judges the
   * others: after an outage or a stall of its own, everyone's last beat is old, not only the dead's.
   * Returns how many claims were released.
   */
  async heartbeat(): Promise<number> {
    const now = this.deps.clock.now();
    try {
      const steady = this.beatingSince !== null && now - this.lastBeat < REPLICA_STALE_MS / 2;
      if (!steady) this.beatingSince = now;
      const judge = steady && this.beatingSince !== null && now - this.beatingSince >= REPLICA_STALE_MS;
      const released = await heartbeatAndReleaseDead(
        this.deps.database.db,
        this.replica,
        new Date(now),
        judge ? new Date(now - REPLICA_STALE_MS) : null,
      );
      this.lastBeat = now;
      if (released > 0) this.deps.logger.info("released the claims of replicas that stopped beating", { released });
      return released;
    } catch (error) {
      this.beatingSince = null;
      throw error;
    }
  }

  /** Ids of the lines the last reconcile could not schedule. */
  unschedulableLines(): string[] {
    return [...this.unschedulable];
  }

  /**
   * Probe a line now with every sample that applies; returns the stored results, and how many
   * probes were sent but could not be stored (the database was unreachable).
   */
  async probeNow(lineId: string): Promise<{ results: StoredProbeResult[]; notStored: number }> {
    const snapshot = await this.registry.get();
    const line = snapshot.lines.get(lineId);
    if (!line) return { results: [], notStored: 0 };
    const samples = this.samplesOf(snapshot, line);
    await this.syncBaselines(samples.map((s) => ({ lineId: line.id, sampleId: s.id })));
    this.busy += samples.length;
    let notStored = 0;
    const results = await Promise.all(
      samples.map(async (sample) => {
        const lengths = this.lengthsOf(snapshot, line, sample.id, this.anchors.get(`${line.id}/${sample.id}`) ?? null);
        const input = await this.send(line, sample, "manual", null, lengths);
        const stored = input ? await this.store(line, sample, { input, completion: null }) : null;
        if (input && !stored) notStored++;
        return stored;
      }),
    );
    return { results: results.filter((r): r is StoredProbeResult => r !== null), notStored };
  }

  /**
   * Make the schedule match the registry: a row per (probed line, applicable sample), spread across
   * the line's interval from a random start, and none for anything else. When the registry asks
   * for what it asked for last time, the database is left alone (at most RECONCILE_FULL_MS).
   */
  async reconcile(): Promise<void> {
    const db = this.deps.database.db;
    const snapshot = await this.registry.get();
    const now = this.deps.clock.now();
    const want = new Map<string, { lineId: string; sampleId: string; offset: number }>();
    const unschedulable = new Set<string>();
    for (const line of snapshot.lines.values()) {
      if (!isProbed(line)) continue;
      const samples = this.samplesOf(snapshot, line);
      const interval = probeIntervalMs(line, samples.length);
      if (!(interval <= MAX_SCHEDULE_MS)) {
        unschedulable.add(line.id);
        if (!this.unschedulable.has(line.id))
          this.deps.logger.warn(
            "line cannot be scheduled: its probe budget stretches the interval too far; fix dailyQuota or probeBudgetPct",
            {
              line: line.name,
              intervalSec: interval / 1000,
            },
          );
        continue;
      }
      const offsets = sampleOffsetsMs(jitterOffsetMs(this.rng, interval), interval, samples.length);
      for (const [k, sample] of samples.entries())
        want.set(`${line.id}/${sample.id}`, { lineId: line.id, sampleId: sample.id, offset: offsets[k] ?? 0 });
    }
    this.unschedulable = unschedulable;
    const last = this.reconciled;
    if (last && now - last.at < RECONCILE_FULL_MS && last.want.size === want.size && [...want.keys()].every((k) => last.want.has(k)))
      return;
    const existing = await listScheduleKeys(db);
    const have = new Set(existing.map((r) => `${r.lineId}/${r.sampleId}`));
    const inserts = [...want.entries()]
      .filter(([k]) => !have.has(k))
      .map(([, w]) => ({ lineId: w.lineId, sampleId: w.sampleId, nextAt: new Date(now + w.offset) }));
    await insertScheduleRows(db, inserts);
    for (const row of existing) {
      if (!want.has(`${row.lineId}/${row.sampleId}`)) await deleteScheduleRow(db, row.lineId, row.sampleId);
    }
    this.baselines.retain((lineId, sampleId) => want.has(`${lineId}/${sampleId}`));
    this.reconciled = { want: new Set(want.keys()), at: now };
  }

  /** One scheduler tick: claim what is due, as many as there are free slots, and send it. */
  async runDue(): Promise<number> {
    // Ticks and refills take turns: one claim at a time, each for the slots free when it starts.
    while (this.claiming) await this.claiming.catch(() => 0);
    const claim = this.claimDue();
    this.claiming = claim;
    try {
      return await claim;
    } finally {
      if (this.claiming === claim) this.claiming = null;
    }
  }

  private async claimDue(): Promise<number> {
    const free = this.freeSlots();
    if (free <= 0 || this.closed) return 0;
    const now = this.deps.clock.now();
    // The registry is read when there is something to send, not on every idle tick.
    const leaseMs = this.leaseOf?.ms ?? this.leaseMs(await this.registry.get());
    const claimed = await claimDueProbesWithContext(this.deps.database.db, this.replica, new Date(now), new Date(now + leaseMs), free);
    this.busy += claimed.length; // each is let go when its probe is sent (send) or dropped (runClaimed)
    // A full claim may have left due work behind: refill as slots free up.
    this.moreDue = claimed.length === free;
    if (claimed.length === 0) return 0;
    this.leaseMs(await this.registry.get()); // for the next claim
    const stale = claimed.filter((r) => this.baselines.needsSync(r.lineId, r.sampleId, r.newestResultAt));
    if (stale.length > 0) await this.syncBaselines(stale);
    for (const row of claimed) {
      const anchored = anchoredLength(row.lengthTrack ?? undefined);
      if (anchored !== null) this.anchors.set(`${row.lineId}/${row.sampleId}`, anchored);
    }
    for (const row of claimed) this.track(this.runClaimed(row, row.fast));
    return claimed.length;
  }

  /** Slots neither sending nor claimed to send. */
  private freeSlots(): number {
    return this.deps.config.maxInFlight - this.busy;
  }

  /**
   * The lease covers the longest timeout a probe may take, plus slack for storing the result; kept
   * per registry snapshot (a claim uses the one of the snapshot the previous claim saw). It is the
   * backstop: a dead replica's claims are released sooner through the heartbeats (heartbeat()).
   */
  private leaseMs(snapshot: RegistrySnapshot): number {
    if (this.leaseOf?.snapshot !== snapshot) {
      let max = 10_000;
      for (const l of snapshot.lines.values()) max = Math.max(max, l.timeoutMs ?? 0);
      for (const s of snapshot.samples.values()) max = Math.max(max, s.timeoutMs ?? 0);
      this.leaseOf = { snapshot, ms: max + 30_000 };
    }
    return this.leaseOf.ms;
  }

  /** The samples that apply to a line, worked out once per registry snapshot. */
  private samplesOf(snapshot: RegistrySnapshot, line: CachedLine): Sample[] {
    if (this.samplesOf_?.snapshot !== snapshot) this.samplesOf_ = { snapshot, byLine: new Map() };
    let samples = this.samplesOf_.byLine.get(line.id);
    if (!samples) {
      samples = applicableSamples(line, snapshot.samples.values());
      this.samplesOf_.byLine.set(line.id, samples);
    }
    return samples;
  }

  /**
   * The usual length of this sample on the line's route mates (the other lines of its routes), the
   * median of their anchors as this replica last saw them; null when none has one. Route members are
   * indexed once per registry snapshot.
   */
  private peerLength(snapshot: RegistrySnapshot, line: CachedLine, sampleId: string): number | null {
    if (this.mates_?.snapshot !== snapshot) {
      const byRoute = new Map<string, string[]>();
      for (const l of snapshot.lines.values()) {
        for (const r of l.routes) {
          const members = byRoute.get(r.route);
          if (members) members.push(l.id);
          else byRoute.set(r.route, [l.id]);
        }
      }
      this.mates_ = { snapshot, byRoute };
    }
    const mates = new Set(line.routes.flatMap((r) => this.mates_?.byRoute.get(r.route) ?? []));
    mates.delete(line.id);
    const lengths = [...mates].flatMap((id) => this.anchors.get(`${id}/${sampleId}`) ?? []);
    return lengths.length === 0 ? null : median(lengths);
  }

  /** What a probe of `sample` on `line` is scored against besides its history: the anchored and the peers' usual length. */
  private lengthsOf(snapshot: RegistrySnapshot, line: CachedLine, sampleId: string, anchored: number | null): ProbeLengths {
    return { anchoredLength: anchored, peerLength: this.peerLength(snapshot, line, sampleId) };
  }

  /**
   * A slot is free again: if the last claim left due work behind, claim again once a quarter of the
   * slots is free (not one query per finished probe).
   */
  private release(): void {
    this.busy--;
    if (!this.moreDue || this.claiming || this.closed) return;
    if (this.freeSlots() < Math.max(1, Math.ceil(this.deps.config.maxInFlight / 4)) && this.busy > 0) return;
    this.track(
      this.runDue().catch((error: unknown) => {
        this.moreDue = false; // the next tick tries again
        this.deps.logger.warn("cannot claim due probes", errorSummary(error));
      }),
    );
  }

  private track(task: Promise<unknown>): void {
    this.running.add(task);
    void task.finally(() => this.running.delete(task));
  }

  /** Bring the in-memory baselines of these pairs up to date (one query). A failure leaves them as they are. */
  private async syncBaselines(pairs: { lineId: string; sampleId: string }[]): Promise<void> {
    await this.baselines
      .sync(this.deps.database.db, pairs)
      .catch((error: unknown) => this.deps.logger.warn("cannot read baselines", errorSummary(error)));
  }

  private async runClaimed(row: ClaimedProbe, fast: boolean): Promise<void> {
    const snapshot = await this.registry.get();
    const line = snapshot.lines.get(row.lineId);
    const sample = snapshot.samples.get(row.sampleId);
    if (!line || !sample || !isProbed(line)) {
      this.release();
      await deleteScheduleRow(this.deps.database.db, row.lineId, row.sampleId);
      return;
    }
    const slot = row.nextAt.getTime();
    const lengths = this.lengthsOf(snapshot, line, sample.id, anchoredLength(row.lengthTrack ?? undefined));
    const input = await this.send(line, sample, row.trigger, slot, lengths);
    const interval = probeIntervalMs(line, this.samplesOf(snapshot, line).length, { fast });
    const now = this.deps.clock.now();
    // Keep the cadence of regular slots: a confirming probe stands in front of a regular slot and
    // hands it back (regularAt), so samples never bunch up. Never schedule into the past.
    const step = Math.min(interval, MAX_SCHEDULE_MS);
    let next = row.trigger === "confirm" ? (row.regularAt ?? now + step) : slot + step;
    if (next <= now) next = now + jitterOffsetMs(this.rng, Math.min(interval, 5_000));
    const completion: ClaimCompletion = { lineId: row.lineId, sampleId: row.sampleId, claimedAt: row.nextAt, nextAt: new Date(next) };
    await this.store(line, sample, { input, completion });
  }

  /**
   * Send and score within the in-flight bound; the slot is free again as soon as the answer is
   * scored (storing it is not the upstream's business). The caller has counted it in `busy`.
   */
  private async send(
    line: CachedLine,
    sample: Sample,
    trigger: string,
    slot: number | null,
    lengths: ProbeLengths,
  ): Promise<ProbeResultInsert | null> {
    try {
      return await this.limit(() => this.probe(line, sample, trigger, slot, lengths));
    } catch (error) {
      this.deps.logger.error("probe failed to run", {
        line: line.name,
        sample: sample.name,
        timeoutMs: probeTimeoutMs(line, sample),
        ...errorSummary(error),
      });
      return null;
    } finally {
      this.release();
    }
  }

  private async probe(
    line: CachedLine,
    sample: Sample,
    trigger: string,
    slot: number | null,
    lengths: ProbeLengths,
  ): Promise<ProbeResultInsert> {
    this.stats_.inFlight++;
    this.stats_.peakInFlight = Math.max(this.stats_.peakInFlight, this.stats_.inFlight);
    this.stats_.sent++;
    if (slot !== null) this.hooks.onStart?.(this.deps.clock.now() - slot);
    this.stall.begin();
    try {
      const history = this.baselines.history(line.id, sample.id);
      return await sendAndScore(
        this.deps,
        this.agent,
        { line, apiKey: line.apiKey, sample, trigger, slot, ...lengths },
        history,
        this.stall,
      );
    } finally {
      this.stall.end();
      this.stats_.inFlight--;
    }
  }

  /**
   * Store a result with the claim it hands back (one group commit), then apply it (health,
   * metrics). A claim that cannot be handed back is retried alone until the database takes it.
   */
  private async store(line: CachedLine, sample: Sample, item: Store): Promise<StoredProbeResult | null> {
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
        if (this.closed || attempt >= HAND_BACK_ATTEMPTS) return;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }

  /** Wait for the probes under way (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.drain();
    this.stall.stop();
    await this.agent.close();
  }
}
