import { anchoredLength, phaseAt, probeIntervalMs, slotAfter } from "@linewatch/core";
import {
  type ClaimCompletion,
  type ClaimedProbe,
  deleteScheduleRow,
  errorSummary,
  healthOfLines,
  type StoredProbeResult,
} from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { RegistryCache } from "../registry-cache";
import { BaselineCache } from "./baseline-cache";
import { DueClaims } from "./due-claims";
import { ReplicaHeartbeat } from "./heartbeat";
import { LengthAnchors } from "./length-anchors";
import { LineSamples } from "./line-samples";
import { type ProberStats, ProbeSender } from "./probe-sender";
import { RelayTracks } from "./relay-tracks";
import { type ProcessPlace, runsHere, takeOverGoneReplicas, thisProcess } from "./restart-claims";
import { ResultStore } from "./result-store";
import { isProbed, MAX_SCHEDULE_MS, ScheduleReconciler } from "./schedule-reconciler";

export { REPLICA_STALE_MS } from "./heartbeat";
export type { ProberStats } from "./probe-sender";

export interface ProberHooks {
  /** Called with every stored result (health, metrics). Errors are logged, never lost silently. */
  onResult(result: StoredProbeResult): Promise<void>;
  /** Called as a claimed probe starts, with how late it is after its due time (ms): the prober's backlog. */
  onStart?(lateMs: number): void;
}

/**
 * When a claimed probe's (line, sample) is due next: the next slot of its phase at the interval it
 * probes at now (core's slots.ts), so samples keep their places in the interval through fast probing
 * and after it. A confirming probe stands in front of a regular slot and hands it back (regularAt).
 * Never in the past: a probe sent over an interval late takes its next slot after now.
 */
export function nextDueAt(row: Pick<ClaimedProbe, "trigger" | "nextAt" | "phase" | "regularAt">, intervalMs: number, now: number): number {
  const step = Math.min(intervalMs, MAX_SCHEDULE_MS);
  const phase = row.phase ?? phaseAt(row.regularAt ?? row.nextAt.getTime(), step);
  if (row.trigger === "confirm" && row.regularAt !== null && row.regularAt > now) return row.regularAt;
  const next = slotAfter(row.trigger === "confirm" ? now : row.nextAt.getTime(), phase, step);
  return next > now ? next : slotAfter(now, phase, step);
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
 *   at once while due work remains (DueClaims).
 *
 * The parts: DueClaims (slots, claims), ProbeSender (send and score), ResultStore (store, hand
 * claims back), ScheduleReconciler (the schedule), ReplicaHeartbeat, and what a probe is scored
 * against (BaselineCache, LengthAnchors).
 */
export class Prober {
  readonly replica: string;
  private readonly baselines = new BaselineCache();
  private readonly samples = new LineSamples();
  private readonly lengths = new LengthAnchors();
  private readonly relay = new RelayTracks();
  private readonly heartbeats: ReplicaHeartbeat;
  private readonly reconciler: ScheduleReconciler;
  private readonly claims: DueClaims;
  private readonly sender: ProbeSender;
  private readonly results: ResultStore;
  private readonly place: ProcessPlace = thisProcess();
  private readonly leaveHere: () => void;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger" | "config" | "dnsLookup">,
    private readonly registry: RegistryCache,
    hooks: ProberHooks,
    rng: () => number = Math.random,
  ) {
    this.replica = deps.config.replicaId ?? `cp-${process.pid}-${Math.floor(rng() * 1e9).toString(36)}`;
    this.heartbeats = new ReplicaHeartbeat(deps, this.replica, this.place);
    this.leaveHere = runsHere(this.replica);
    this.reconciler = new ScheduleReconciler(deps, registry, this.samples, this.baselines, rng);
    this.claims = new DueClaims(deps, registry, this.replica, {
      prepare: (claimed) => this.prepare(claimed),
      run: (row) => this.runClaimed(row),
    });
    this.sender = new ProbeSender(
      deps,
      this.baselines,
      {
        onStart: (lateMs) => hooks.onStart?.(lateMs),
        onSent: () => this.claims.release(),
      },
      rng,
    );
    this.results = new ResultStore(deps, this.replica, this.baselines, {
      onResult: (result) => hooks.onResult(result),
      closed: () => this.claims.closed,
    });
  }

  stats(): ProberStats {
    return this.sender.stats();
  }

  /** Tell the other replicas this one is alive and release the claims of those that stopped beating (ReplicaHeartbeat). */
  heartbeat(): Promise<number> {
    return this.heartbeats.beat();
  }

  /** At start: release the claims of replicas on this host whose process is gone (restart-claims.ts). */
  takeOverGone(): Promise<number> {
    return takeOverGoneReplicas(this.deps, { ...this.place, id: this.replica });
  }

  /** Ids of the lines the last reconcile could not schedule. */
  unschedulableLines(): string[] {
    return this.reconciler.unschedulableLines();
  }

  /** Make the schedule match the registry (ScheduleReconciler); forget the tracks of lines and samples it no longer has. */
  async reconcile(): Promise<void> {
    await this.reconciler.reconcile();
    const snapshot = await this.registry.get();
    this.relay.retain(
      (lineId, sampleId) => snapshot.lines.has(lineId) && snapshot.samples.has(sampleId),
      (lineId) => snapshot.lines.has(lineId),
    );
  }

  /** One scheduler tick: claim what is due, as many as there are free slots, and send it. */
  runDue(): Promise<number> {
    return this.claims.runDue();
  }

  /**
   * Probe a line now with every sample that applies; returns the stored results, and how many
   * probes were sent but could not be stored (the database was unreachable).
   */
  async probeNow(lineId: string): Promise<{ results: StoredProbeResult[]; notStored: number }> {
    const snapshot = await this.registry.get();
    const line = snapshot.lines.get(lineId);
    if (!line) return { results: [], notStored: 0 };
    const samples = this.samples.of(snapshot, line);
    await this.syncBaselines(samples.map((s) => ({ lineId: line.id, sampleId: s.id })));
    await this.syncRelay([line.id, ...this.relay.peerIds(snapshot, line)]);
    this.claims.reserve(samples.length);
    let notStored = 0;
    const now = this.deps.clock.now();
    const results = await Promise.all(
      samples.map(async (sample) => {
        const lengths = this.lengths.of(snapshot, line, sample.id, this.lengths.anchored(line.id, sample.id));
        const relay = this.relay.of(snapshot, line, sample, samples, now);
        const input = await this.sender.send({ line, sample, trigger: "manual", slot: null, lengths, relay });
        const stored = input ? await this.results.store(line, sample, { input, completion: null }) : null;
        if (input && !stored) notStored++;
        return stored;
      }),
    );
    return { results: results.filter((r): r is StoredProbeResult => r !== null), notStored };
  }

  /** Wait for the probes under way (shutdown, tests). */
  drain(): Promise<void> {
    return this.claims.drain();
  }

  async close(): Promise<void> {
    await this.claims.close();
    await this.sender.close();
    this.leaveHere();
  }

  /** A claimed batch is about to go out: baselines another replica moved are read (one query), anchors kept. */
  private async prepare(claimed: ClaimedProbe[]): Promise<void> {
    const stale = claimed.filter((r) => this.baselines.needsSync(r.lineId, r.sampleId, r.newestResultAt));
    if (stale.length > 0) await this.syncBaselines(stale);
    this.lengths.record(claimed);
    this.relay.record(claimed);
  }

  /** Bring the in-memory baselines of these pairs up to date (one query). A failure leaves them as they are. */
  private async syncBaselines(pairs: { lineId: string; sampleId: string }[]): Promise<void> {
    await this.baselines
      .sync(this.deps.database.db, pairs)
      .catch((error: unknown) => this.deps.logger.warn("cannot read baselines", errorSummary(error)));
  }

  /** Read these lines' fingerprint, usage and shape tracks from health (one query). A failure leaves them as they were. */
  private async syncRelay(lineIds: string[]): Promise<void> {
    await healthOfLines(this.deps.database.db, lineIds)
      .then((rows) => this.relay.recordHealth(rows))
      .catch((error: unknown) => this.deps.logger.warn("cannot read fingerprint and usage tracks", errorSummary(error)));
  }

  /** Send a claimed probe, then store its result with the claim handed back for its next slot. */
  private async runClaimed(row: ClaimedProbe): Promise<void> {
    const snapshot = await this.registry.get();
    const line = snapshot.lines.get(row.lineId);
    const sample = snapshot.samples.get(row.sampleId);
    if (!line || !sample || !isProbed(line)) {
      this.claims.release();
      await deleteScheduleRow(this.deps.database.db, row.lineId, row.sampleId);
      return;
    }
    const slot = row.nextAt.getTime();
    const samples = this.samples.of(snapshot, line);
    const lengths = this.lengths.of(snapshot, line, sample.id, anchoredLength(row.lengthTrack ?? undefined));
    const relay = this.relay.of(snapshot, line, sample, samples, this.deps.clock.now());
    const input = await this.sender.send({ line, sample, trigger: row.trigger, slot, lengths, relay });
    const interval = probeIntervalMs(line, samples.length, { fast: row.fast });
    const next = nextDueAt(row, interval, this.deps.clock.now());
    const completion: ClaimCompletion = { lineId: row.lineId, sampleId: row.sampleId, claimedAt: row.nextAt, nextAt: new Date(next) };
    await this.results.store(line, sample, { input, completion });
  }
}
