// Re-runs the health machine (docs/health.md) and the table math (docs/tables.md) over stored probe results, the way
// the control plane's health service does live: each result is applied when it finished, with the
// line score of the results finished by then; timers fire at nextTickAt; tables are recomputed for
// a line's routes when its weight or state moves. Confirming re-probes are not asked for: the
// history already holds the ones the live path ran.
import {
  type Health,
  type HealthPolicy,
  type HealthState,
  initialHealth,
  lineStatus,
  newLineHealth,
  nextTickAt,
  transition,
  weightFactor,
} from "../health/index";
import { LINE_SCORE_WINDOW_MS } from "../scoring/line-score";
import {
  type ComputedTable,
  computeTable,
  type PublishedTable,
  publishTableBy,
  type TableLine,
  type TableMember,
  versionedState,
} from "../tables/index";
import { type BadEpisode, BadEpisodeTracker } from "./bad-episodes";
import { MinHeap } from "./min-heap";
import { probeEventOf, type ReplayResult, type ReplayScoring, rescore } from "./probe-event";
import { ScoreWindow } from "./score-window";
import { type ReplayLine, type ReplayRoute, TimelineBuilder, type TimelineSummary } from "./timeline";

/** A table line with its state, so replay versions tables as live does (docs/tables.md#versions). */
type StatedLine = TableLine & { state: string | undefined };
const statedLineKey = (l: StatedLine) => `${l.lineId}=${l.weight}|${versionedState(l.state)}`;

export interface ReplaySetup {
  from: number;
  to: number;
  /** Every line of the routes replayed (a route's table needs all its members). */
  lines: readonly ReplayLine[];
  routes: readonly ReplayRoute[];
  /** Sample weights for the line score; 1 when absent. */
  sampleWeights: ReadonlyMap<string, number>;
  /** The policy each line runs under in the replay. */
  policies: ReadonlyMap<string, HealthPolicy>;
  scoring: ReplayScoring | null;
  /** Lines whose every change of state and factor the summary keeps (e.g. for a chart). */
  keepPoints?: (lineId: string) => boolean;
}

export interface ReplayRun {
  summary: TimelineSummary;
  badEpisodes: BadEpisode[];
  /** Results applied; results of lines outside the setup or outside the range are skipped. */
  results: number;
  skipped: number;
}

interface LineRun {
  line: ReplayLine;
  policy: HealthPolicy;
  health: Health;
  state: HealthState;
  factor: number;
  tickAt: number | null;
  window: ScoreWindow;
}

interface Pending {
  at: number;
  row: ReplayResult;
}

/** Results are released in finish order once no result still to come can finish earlier. */
const byFinish = (a: Pending, b: Pending): boolean =>
  a.at !== b.at ? a.at < b.at : a.row.startedAt !== b.row.startedAt ? a.row.startedAt < b.row.startedAt : a.row.id < b.row.id;

const byTick = (a: { at: number; lineId: string }, b: { at: number; lineId: string }): boolean =>
  a.at !== b.at ? a.at < b.at : a.lineId < b.lineId;

export class PolicyReplay {
  private readonly lines = new Map<string, LineRun>();
  private readonly tables = new Map<string, PublishedTable<StatedLine>>();
  private readonly routeOf = new Map<string, ReplayRoute>();
  private readonly membersOf = new Map<string, ReplayLine[]>();
  private readonly pending = new MinHeap<Pending>(byFinish);
  private readonly ticks = new MinHeap<{ at: number; lineId: string }>(byTick);
  private readonly timeline: TimelineBuilder;
  private readonly bad = new BadEpisodeTracker();
  private clock: number;
  private lastStart = Number.NEGATIVE_INFINITY;
  private results = 0;
  private skipped = 0;

  constructor(private readonly setup: ReplaySetup) {
    this.clock = setup.from;
    const sorted = [...setup.lines].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const route of setup.routes) {
      this.routeOf.set(route.name, route);
      this.membersOf.set(
        route.name,
        sorted.filter((l) => l.routes.some((m) => m.route === route.name)),
      );
    }
    for (const line of sorted) {
      const policy = setup.policies.get(line.id);
      if (!policy) throw new Error(`no policy for line ${line.id}`);
      // A line registered within the replay starts as it did: unprobed (docs/health.md#new-lines).
      const health =
        line.createdAt !== undefined && line.createdAt >= setup.from
          ? newLineHealth(setup.from, line.adminState, policy)
          : initialHealth(setup.from, line.adminState);
      const status = lineStatus(line.adminState, health, policy, setup.from);
      this.lines.set(line.id, {
        line,
        policy,
        health,
        state: status.state,
        factor: status.factor,
        tickAt: null,
        window: new ScoreWindow(LINE_SCORE_WINDOW_MS),
      });
    }
    const startTables = new Map<string, { mode: ComputedTable["mode"]; weights: Map<string, number> }>();
    for (const route of setup.routes) {
      const computed = this.compute(route.name);
      const published = publishTableBy(statedLineKey, null, this.stated(computed), setup.from);
      this.tables.set(route.name, published.table);
      startTables.set(route.name, { mode: computed.mode, weights: new Map(computed.lines.map((l) => [l.lineId, l.weight])) });
    }
    this.timeline = new TimelineBuilder(
      setup.from,
      setup.to,
      sorted,
      setup.routes,
      { lines: new Map([...this.lines].map(([id, l]) => [id, { state: l.state, factor: l.factor }])), tables: startTables },
      setup.keepPoints ?? (() => false),
    );
  }

  /** One stored result; results come in start-time order. */
  push(stored: ReplayResult): void {
    if (!this.lines.has(stored.lineId) || stored.startedAt < this.setup.from || stored.startedAt >= this.setup.to) {
      this.skipped++;
      return;
    }
    // Start-time order is what the database gives; a result that breaks it is applied at once.
    this.lastStart = Math.max(this.lastStart, stored.startedAt);
    this.release(this.lastStart);
    const row = rescore(stored, this.setup.scoring);
    this.bad.observe(stored);
    this.pending.push({ at: Math.max(row.startedAt + Math.max(0, row.latencyMs), this.clock), row });
  }

  finish(): ReplayRun {
    this.release(Number.POSITIVE_INFINITY);
    this.runTicks(this.setup.to);
    return { summary: this.timeline.finish(), badEpisodes: this.bad.finish(), results: this.results, skipped: this.skipped };
  }

  /** Applies every pending result that finished by `until` (and the timers due before each). */
  private release(until: number): void {
    for (let next = this.pending.peek(); next !== undefined && next.at <= until; next = this.pending.peek()) {
      this.pending.pop();
      if (next.at >= this.setup.to) {
        this.skipped++;
        continue;
      }
      this.runTicks(next.at);
      this.apply(next.row, next.at);
    }
  }

  private runTicks(until: number): void {
    for (let t = this.ticks.peek(); t !== undefined && t.at <= until; t = this.ticks.peek()) {
      this.ticks.pop();
      const run = this.lines.get(t.lineId);
      if (!run || run.tickAt !== t.at) continue; // superseded
      run.tickAt = null;
      const now = Math.max(t.at, this.clock);
      this.step(run, transition(run.health, { type: "tick" }, run.policy, now), now);
    }
  }

  private apply(row: ReplayResult, now: number): void {
    const run = this.lines.get(row.lineId);
    if (!run) return;
    this.results++;
    const weight = this.setup.sampleWeights.get(row.sampleId) ?? 1;
    run.window.push(row.startedAt, row.score, weight);
    // Time only moves on, so a result that started before the window never comes back into it.
    // The score picks the window's results as lineScore does; this only keeps the list short.
    run.window.trim(now);
    const score = run.window.score(now);
    this.step(
      run,
      transition(run.health, probeEventOf(row, score ?? row.score, run.line.intervalMs ?? null, run.line.sampleIds), run.policy, now),
      now,
    );
  }

  private step(run: LineRun, next: ReturnType<typeof transition>, now: number): void {
    this.clock = Math.max(this.clock, now);
    const before = run.health;
    run.health = next.health;
    const tickAt = nextTickAt(run.health, run.policy);
    if (tickAt !== run.tickAt) {
      run.tickAt = tickAt;
      if (tickAt !== null) this.ticks.push({ at: tickAt, lineId: run.line.id });
    }
    const moved = weightFactor(before) !== weightFactor(run.health) || before.phase.state !== run.health.phase.state;
    if (!moved) return;
    const status = lineStatus(run.line.adminState, run.health, run.policy, now);
    const cause = next.effects.find((e) => e.kind === "state_change" || e.kind === "weight_change");
    const reason = cause && "reason" in cause ? `${cause.reason}: ${cause.detail}` : "health";
    if (run.state !== status.state) this.timeline.lineState(run.line.id, now, status.state, reason);
    run.state = status.state;
    run.factor = status.factor;
    this.timeline.lineFactor(run.line.id, now, status.factor, reason);
    for (const m of [...run.line.routes].map((r) => r.route).sort()) {
      const prev = this.tables.get(m);
      if (!prev) continue;
      const published = publishTableBy(statedLineKey, prev, this.stated(this.compute(m)), now, { reason, probeIds: [] });
      this.tables.set(m, published.table);
      if (published.changed)
        this.timeline.table(m, now, published.table.mode, new Map(published.table.lines.map((l) => [l.lineId, l.weight])), true);
    }
  }

  /** A computed table's lines with their states now, for versioning as live. */
  private stated(t: ComputedTable): ComputedTable<StatedLine> {
    return { ...t, lines: t.lines.map((l) => ({ ...l, state: this.lines.get(l.lineId)?.state })) };
  }

  /** The route's table from its members' current factors, as the publisher builds it. */
  private compute(routeName: string): ComputedTable {
    const route = this.routeOf.get(routeName);
    if (!route) throw new Error(`route ${routeName} is not in the replay`);
    const members: TableMember[] = (this.membersOf.get(routeName) ?? []).map((l) => ({
      lineId: l.id,
      name: l.name,
      tier: l.tier,
      baseWeight: l.routes.find((m) => m.route === routeName)?.weight ?? 0,
      factor: this.lines.get(l.id)?.factor ?? 0,
      maxShare: l.maxShare,
      adminState: l.adminState,
      ...(l.protocol === undefined ? {} : { protocol: l.protocol }),
    }));
    return computeTable({ route: { name: route.name, freeShareCap: route.freeShareCap, onAllDown: route.onAllDown }, members });
  }
}
