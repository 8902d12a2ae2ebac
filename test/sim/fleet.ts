// A simulated fleet driven by core, the way the shell will drive it: a prober that spreads each
// line's samples across its interval, sends confirming re-probes and fast probes when health asks,
// feeds results (with the 10-min line score) into `transition`, ticks health when `nextTickAt`
// says, and republishes the route's table when a weight changes. Everything on a virtual clock.
import {
  computeTable,
  DEFAULT_HEALTH_POLICY,
  type FingerprintStep,
  type Health,
  type HealthEffect,
  type HealthPolicy,
  initialHealth,
  isFastProbing,
  jitterOffsetMs,
  lineScore,
  nextTickAt,
  type PublishedTable,
  probeIntervalMs,
  publishTable,
  sampleOffsetsMs,
  type TableRoute,
  transition,
  type UsageStep,
  weightFactor,
} from "../../packages/core/src/index";
import type { AdminState, Tier } from "../../packages/core/src/types";
import { VirtualClock } from "./clock";
import { mulberry32 } from "./rng";

export interface SimOutcome {
  score: number;
  passed: boolean;
  hardFailure: boolean;
  /** Time to the answer; past the sample's timeout the fleet records a timeout (hard failure, score 0). */
  latencyMs: number;
  /** Characters of the answer, for the line's length tracks; absent: not tracked. */
  contentLength?: number;
  /** What a relay can fake: the scorer's fingerprint and usage steps and the answer's shape signature. */
  fingerprint?: FingerprintStep | null;
  usage?: UsageStep | null;
  shape?: string | null;
  /** Failed check names, for the figures (e.g. "usage"). */
  failedChecks?: string[];
}

export interface SimSample {
  id: string;
  timeoutMs: number;
}

export type ProbeKind = "scheduled" | "reprobe";

/** What the prober knows besides the line's own health: its route mates naming the same model (their health, as the shell reads it). */
export interface RespondContext {
  lineId: string;
  tier: Tier;
  /** Route mates with the same `model`, at the time of the probe. */
  peers: () => Array<{ lineId: string; tier: Tier; health: Health }>;
  /** The line's regular probe interval and its samples (fingerprint thresholds are chosen for them). */
  intervalMs: number;
}

export interface FleetLine {
  id: string;
  tier: Tier;
  baseWeight: number;
  maxShare?: number | null;
  probeIntervalSec?: number;
  dailyQuota?: number | null;
  probeBudgetPct?: number;
  adminState?: AdminState;
  /** The model the line names: route mates naming the same one are its peers (default: all name the same). */
  model?: string;
  /** The line joins the route (registered, probed, in the table) at this time; default: at the start. */
  joinAt?: number;
  /** The upstream: what a probe of `sample` started at `at` gets (scored against the line's `health`, as the prober does). */
  respond: (sample: SimSample, at: number, kind: ProbeKind, health: Health, ctx: RespondContext) => SimOutcome;
}

export interface FleetOptions {
  route: TableRoute;
  lines: FleetLine[];
  samples: SimSample[];
  policy?: HealthPolicy;
  seed?: number;
  start: number;
  /** `staggered` (default): a line's samples evenly across its interval; `batch`: all at once. */
  spread?: "staggered" | "batch";
}

export interface FleetEvent {
  at: number;
  lineId: string;
  effect: HealthEffect;
}

interface SampleTimer {
  lastStart: number;
  nextAt: number;
  gen: number;
}

interface LineState {
  line: FleetLine;
  health: Health;
  results: Array<{ score: number; startedAt: number }>;
  timers: Map<string, SampleTimer>;
  tickAt: number | null;
  tickGen: number;
  probes: { scheduled: number; reprobe: number; fast: number };
  factors: Array<{ at: number; factor: number }>;
  /** Results with what the figures need, in order. */
  log: Array<{ at: number; kind: ProbeKind; sampleId: string; passed: boolean; failedChecks: string[] }>;
  joined: boolean;
}

export class Fleet {
  readonly clock: VirtualClock;
  readonly policy: HealthPolicy;
  readonly events: FleetEvent[] = [];
  readonly tables: PublishedTable[] = [];
  private readonly lines = new Map<string, LineState>();
  private readonly rng: () => number;
  private seq = 0;

  constructor(private readonly opts: FleetOptions) {
    this.clock = new VirtualClock(opts.start);
    this.policy = opts.policy ?? DEFAULT_HEALTH_POLICY;
    this.rng = mulberry32(opts.seed ?? 1);
    for (const line of opts.lines) {
      const joinAt = Math.max(opts.start, line.joinAt ?? opts.start);
      const health = initialHealth(joinAt, line.adminState ?? "active");
      this.lines.set(line.id, {
        line,
        health,
        results: [],
        timers: new Map(),
        tickAt: null,
        tickGen: 0,
        probes: { scheduled: 0, reprobe: 0, fast: 0 },
        factors: [{ at: joinAt, factor: weightFactor(health) }],
        log: [],
        joined: joinAt <= opts.start,
      });
    }
    this.publish({ reason: "line_set", probeIds: [] });
    for (const s of this.lines.values()) {
      if (s.joined) this.startProbing(s);
      else
        this.clock.at(s.factors[0]?.at ?? opts.start, () => {
          s.joined = true;
          this.publish({ reason: "line_set", probeIds: [] });
          this.startProbing(s);
        });
    }
  }

  get now(): number {
    return this.clock.now;
  }

  runUntil(t: number): void {
    this.clock.runUntil(t);
  }

  health(lineId: string): Health {
    return this.state(lineId).health;
  }

  probes(lineId: string) {
    return { ...this.state(lineId).probes };
  }

  factorTimeline(lineId: string) {
    return [...this.state(lineId).factors];
  }

  /** Every probe result of a line, in the order they were applied. */
  results(lineId: string) {
    return [...this.state(lineId).log];
  }

  get table(): PublishedTable {
    return this.tables[this.tables.length - 1]!;
  }

  /** The weight a line had in the table served at time `t`. */
  weightAt(lineId: string, t: number): number {
    let table = this.tables[0]!;
    for (const tb of this.tables) if (tb.generatedAt <= t) table = tb;
    return table.lines.find((l) => l.lineId === lineId)?.weight ?? 0;
  }

  /** ∫ weight/10000 dt over [from, to) for a line, in ms: the share of the requests in that span it served, × span. */
  servedMs(lineId: string, from: number, to: number): number {
    let total = 0;
    for (let i = 0; i < this.tables.length; i++) {
      const t = this.tables[i]!;
      const a = Math.max(from, t.generatedAt);
      const b = Math.min(to, this.tables[i + 1]?.generatedAt ?? Number.POSITIVE_INFINITY);
      if (b <= a) continue;
      total += ((t.lines.find((l) => l.lineId === lineId)?.weight ?? 0) / 10_000) * (b - a);
    }
    return total;
  }

  admin(lineId: string, adminState: AdminState, at: number): void {
    this.clock.at(at, () => {
      const s = this.state(lineId);
      s.line = { ...s.line, adminState };
      this.apply(s, transition(s.health, { type: "admin", adminState }, this.policy, this.now));
    });
  }

  private state(lineId: string): LineState {
    const s = this.lines.get(lineId);
    if (!s) throw new Error(`no line ${lineId}`);
    return s;
  }

  private interval(s: LineState): number {
    const fast = isFastProbing(s.health, this.now);
    return probeIntervalMs(
      {
        probeIntervalSec: s.line.probeIntervalSec ?? 45,
        dailyQuota: s.line.dailyQuota ?? null,
        probeBudgetPct: s.line.probeBudgetPct ?? 5,
      },
      this.opts.samples.length,
      { fast },
    );
  }

  private startProbing(s: LineState): void {
    const interval = this.interval(s);
    const start = jitterOffsetMs(this.rng, interval);
    const offsets =
      this.opts.spread === "batch" ? this.opts.samples.map(() => start) : sampleOffsetsMs(start, interval, this.opts.samples.length);
    this.opts.samples.forEach((sample, k) => {
      const timer: SampleTimer = { lastStart: this.now - interval, nextAt: this.now + offsets[k]!, gen: 0 };
      s.timers.set(sample.id, timer);
      this.armTimer(s, sample, timer);
    });
  }

  private armTimer(s: LineState, sample: SimSample, timer: SampleTimer): void {
    const gen = ++timer.gen;
    this.clock.at(timer.nextAt, () => {
      if (timer.gen !== gen) return;
      const fast = isFastProbing(s.health, this.now);
      timer.lastStart = this.now;
      timer.nextAt = this.now + this.interval(s);
      this.armTimer(s, sample, timer);
      if (s.line.adminState === "disabled") return;
      this.probe(s, sample, "scheduled", fast);
    });
  }

  private probe(s: LineState, sample: SimSample, kind: ProbeKind, fast = false): void {
    const startedAt = this.now;
    if (kind === "reprobe") s.probes.reprobe++;
    else if (fast) s.probes.fast++;
    else s.probes.scheduled++;
    const out = s.line.respond(sample, startedAt, kind, s.health, this.context(s));
    const hard = out.hardFailure || out.latencyMs > sample.timeoutMs;
    const result = {
      id: `${s.line.id}:${++this.seq}`,
      sampleId: sample.id,
      score: hard ? 0 : out.score,
      passed: hard ? false : out.passed,
      hardFailure: hard,
      startedAt,
      ...(out.contentLength !== undefined && !hard ? { contentLength: out.contentLength } : {}),
      ...(out.fingerprint && !hard ? { fingerprint: out.fingerprint } : {}),
      ...(out.usage && !hard ? { usage: out.usage } : {}),
      ...(out.shape && !hard ? { shape: out.shape } : {}),
    };
    const doneAt = startedAt + Math.min(out.latencyMs, sample.timeoutMs);
    this.clock.at(doneAt, () => {
      s.log.push({ at: startedAt, kind, sampleId: sample.id, passed: result.passed, failedChecks: hard ? [] : (out.failedChecks ?? []) });
      s.results.push({ score: result.score, startedAt });
      const cut = this.now - 10 * 60_000;
      while (s.results.length > 0 && s.results[0]!.startedAt < cut) s.results.shift();
      const ls = lineScore(s.results, this.now) ?? result.score;
      this.apply(s, transition(s.health, { type: "probe", result, lineScore: ls, intervalMs: this.interval(s) }, this.policy, this.now));
    });
  }

  private context(s: LineState): RespondContext {
    const model = s.line.model ?? "";
    return {
      lineId: s.line.id,
      tier: s.line.tier,
      intervalMs: probeIntervalMs(
        {
          probeIntervalSec: s.line.probeIntervalSec ?? 45,
          dailyQuota: s.line.dailyQuota ?? null,
          probeBudgetPct: s.line.probeBudgetPct ?? 5,
        },
        this.opts.samples.length,
      ),
      peers: () =>
        [...this.lines.values()]
          .filter((o) => o !== s && o.joined && (o.line.model ?? "") === model)
          .map((o) => ({ lineId: o.line.id, tier: o.line.tier, health: o.health })),
    };
  }

  private apply(s: LineState, t: ReturnType<typeof transition>): void {
    const before = weightFactor(s.health);
    s.health = t.health;
    let cause: { reason: string; probeIds: string[] } | null = null;
    for (const effect of t.effects) {
      this.events.push({ at: this.now, lineId: s.line.id, effect });
      if (effect.kind === "reprobe") {
        const sample = this.opts.samples.find((x) => x.id === effect.sampleId);
        if (sample) this.clock.at(effect.at, () => this.probe(s, sample, "reprobe"));
      } else if (effect.kind === "fast_probe_until") {
        this.speedUp(s);
      } else if (effect.kind === "weight_change") {
        cause = { reason: effect.reason, probeIds: effect.probeIds };
      }
    }
    const after = weightFactor(s.health);
    if (after !== before) {
      s.factors.push({ at: this.now, factor: after });
      this.publish(cause ?? { reason: "weight_change", probeIds: [] });
    }
    this.armTick(s);
  }

  /** After a trend alert: pull every pending probe of the line in to the fast interval. */
  private speedUp(s: LineState): void {
    const fastInterval = this.interval(s);
    this.opts.samples.forEach((sample) => {
      const timer = s.timers.get(sample.id);
      if (!timer) return;
      const sooner = Math.max(this.now, timer.lastStart + fastInterval);
      if (sooner < timer.nextAt) {
        timer.nextAt = sooner;
        this.armTimer(s, sample, timer);
      }
    });
  }

  private armTick(s: LineState): void {
    const at = nextTickAt(s.health, this.policy);
    if (at === null || at === s.tickAt) return;
    s.tickAt = at;
    const gen = ++s.tickGen;
    this.clock.at(at, () => {
      if (s.tickGen !== gen) return;
      s.tickAt = null;
      this.apply(s, transition(s.health, { type: "tick" }, this.policy, this.now));
    });
  }

  private publish(cause: { reason: string; probeIds: string[] }): void {
    const members = [...this.lines.values()]
      .filter((s) => s.joined)
      .map((s) => ({
        lineId: s.line.id,
        tier: s.line.tier,
        baseWeight: s.line.baseWeight,
        factor: weightFactor(s.health),
        maxShare: s.line.maxShare ?? null,
        adminState: s.line.adminState ?? "active",
      }));
    const next = computeTable({ route: this.opts.route, members });
    const r = publishTable(this.tables[this.tables.length - 1] ?? null, next, this.now, cause);
    if (r.changed) this.tables.push(r.table);
  }
}
