// What happened to each line and route over a time range, built from a stream of changes. The
// replay feeds it what the proposed policy does; the recorded events feed it what did happen; both
// come out in the same summary shape, so the report compares like with like.
import type { HealthState } from "../health/index";
import type { TableMode } from "../tables/index";
import type { AdminState, OnAllDown, RouteMembership, Tier } from "../types";

export interface ReplayLine {
  id: string;
  name: string;
  tier: Tier;
  adminState: AdminState;
  maxShare: number | null;
  routes: readonly RouteMembership[];
  /** The line's protocol: a route's table is computed per protocol (tables/compute-table.ts). */
  protocol?: string;
  /** The line's probe interval (ms), as the live path gives it to the health machine; absent: the default. */
  intervalMs?: number;
  /** When the line was registered (ms): one registered within the replay starts unprobed, as it did (docs/health.md#new-lines). */
  createdAt?: number;
  /** The samples that apply to the line, as the live path gives them to the health machine (a new line's probation). */
  sampleIds?: readonly string[];
}

export interface ReplayRoute {
  name: string;
  freeShareCap: number;
  onAllDown: OnAllDown;
}

/** Where a line stands at a moment: its public state and its weight factor (0–1). */
export interface LinePoint {
  at: number;
  state: HealthState;
  factor: number;
}

export interface Cooldown {
  at: number;
  reason: string;
}

/** A stretch at weight factor 0; `to` null: still at 0 when the range ends. */
export interface ZeroEpisode {
  from: number;
  to: number | null;
  reason: string;
}

export interface LineSummary {
  cooldowns: Cooldown[];
  /** Milliseconds in each state within the range (states never entered are left out). */
  stateMs: Partial<Record<HealthState, number>>;
  /** Time-weighted mean of the line's table weight / 10000, averaged over its routes. */
  meanShare: number;
  zeroWeight: ZeroEpisode[];
}

export interface RouteSummary {
  /** Table versions published within the range (the one in force at its start not counted). */
  versions: number;
  versionsPerHour: { mean: number; worst: { hour: number; versions: number } | null };
  degradedMs: number;
  panicMs: number;
  /** Time-weighted mean share per line id. */
  shares: Record<string, number>;
}

export interface TimelineSummary {
  lines: Map<string, LineSummary>;
  routes: Map<string, RouteSummary>;
  /** Per line: (time, factor) at the start and at each change; for episode shares. */
  factors: Map<string, { at: number; factor: number }[]>;
  /** Per line: (time, share) at the start and at each change. */
  shares: Map<string, { at: number; share: number }[]>;
  /** Per line asked for: every change of state or factor. */
  points: Map<string, LinePoint[]>;
}

const HOUR = 3_600_000;

interface LineTrack {
  line: ReplayLine;
  state: HealthState;
  stateSince: number;
  factor: number;
  stateMs: Partial<Record<HealthState, number>>;
  cooldowns: Cooldown[];
  zero: ZeroEpisode[];
  factors: { at: number; factor: number }[];
  shares: { at: number; share: number }[];
  points: LinePoint[] | null;
  /** Current weight per route of the line. */
  weights: Map<string, number>;
}

interface RouteTrack {
  route: ReplayRoute;
  mode: TableMode;
  modeSince: number;
  degradedMs: number;
  panicMs: number;
  /** Per line id: current weight, since when, and the integral of weight × ms so far. */
  members: Map<string, { weight: number; since: number; weightMs: number }>;
  perHour: number[];
  versions: number;
}

export interface TimelineStart {
  lines: ReadonlyMap<string, { state: HealthState; factor: number }>;
  /** Per route: the table in force at the start (mode and weight per line id); absent: none. */
  tables: ReadonlyMap<string, { mode: TableMode; weights: ReadonlyMap<string, number> }>;
}

export class TimelineBuilder {
  private readonly lines = new Map<string, LineTrack>();
  private readonly routes = new Map<string, RouteTrack>();

  constructor(
    private readonly from: number,
    private readonly to: number,
    lines: readonly ReplayLine[],
    routes: readonly ReplayRoute[],
    start: TimelineStart,
    keepPoints: (lineId: string) => boolean,
  ) {
    for (const route of routes) {
      const table = start.tables.get(route.name);
      const members = new Map<string, { weight: number; since: number; weightMs: number }>();
      for (const l of lines)
        if (l.routes.some((m) => m.route === route.name))
          members.set(l.id, { weight: table?.weights.get(l.id) ?? 0, since: from, weightMs: 0 });
      const perHour = new Array<number>(Math.max(1, Math.ceil((to - from) / HOUR))).fill(0);
      this.routes.set(route.name, {
        route,
        mode: table?.mode ?? "normal",
        modeSince: from,
        degradedMs: 0,
        panicMs: 0,
        members,
        perHour,
        versions: 0,
      });
    }
    for (const line of lines) {
      const s = start.lines.get(line.id) ?? { state: "healthy" as const, factor: 1 };
      const weights = new Map<string, number>();
      for (const m of line.routes) {
        const r = this.routes.get(m.route);
        if (r) weights.set(m.route, r.members.get(line.id)?.weight ?? 0);
      }
      const t: LineTrack = {
        line,
        state: s.state,
        stateSince: from,
        factor: s.factor,
        stateMs: {},
        cooldowns: [],
        zero: s.factor === 0 ? [{ from, to: null, reason: "at weight 0 when the range starts" }] : [],
        factors: [{ at: from, factor: s.factor }],
        shares: [],
        points: keepPoints(line.id) ? [{ at: from, state: s.state, factor: s.factor }] : null,
        weights,
      };
      t.shares.push({ at: from, share: shareOf(t) });
      this.lines.set(line.id, t);
    }
  }

  private clamp(at: number): number {
    return Math.min(this.to, Math.max(this.from, at));
  }

  /** The line's public state changed (reason: why, as the state machine or the event says). */
  lineState(lineId: string, at: number, state: HealthState, reason: string): void {
    const t = this.lines.get(lineId);
    if (!t || t.state === state) return;
    const when = this.clamp(at);
    t.stateMs[t.state] = (t.stateMs[t.state] ?? 0) + (when - t.stateSince);
    t.state = state;
    t.stateSince = when;
    if (state === "cooldown") t.cooldowns.push({ at: when, reason });
    t.points?.push({ at: when, state, factor: t.factor });
  }

  lineFactor(lineId: string, at: number, factor: number, reason: string): void {
    const t = this.lines.get(lineId);
    if (!t || t.factor === factor) return;
    const when = this.clamp(at);
    if (t.factor === 0) {
      const open = t.zero.at(-1);
      if (open && open.to === null) open.to = when;
    }
    if (factor === 0) t.zero.push({ from: when, to: null, reason });
    t.factor = factor;
    t.factors.push({ at: when, factor });
    t.points?.push({ at: when, state: t.state, factor });
  }

  /** A table was computed for the route; `published`: it is a new version (its content changed). */
  table(routeName: string, at: number, mode: TableMode, weights: ReadonlyMap<string, number>, published: boolean): void {
    const r = this.routes.get(routeName);
    if (!r) return;
    const when = this.clamp(at);
    if (published && at >= this.from && at <= this.to) {
      r.versions++;
      const hour = Math.min(r.perHour.length - 1, Math.floor((when - this.from) / HOUR));
      r.perHour[hour] = (r.perHour[hour] ?? 0) + 1;
    }
    if (mode !== r.mode) {
      this.closeMode(r, when);
      r.mode = mode;
      r.modeSince = when;
    }
    for (const [lineId, m] of r.members) {
      const weight = weights.get(lineId) ?? 0;
      if (weight === m.weight) continue;
      m.weightMs += m.weight * (when - m.since);
      m.weight = weight;
      m.since = when;
      const t = this.lines.get(lineId);
      if (!t) continue;
      t.weights.set(routeName, weight);
      t.shares.push({ at: when, share: shareOf(t) });
    }
  }

  private closeMode(r: RouteTrack, at: number): void {
    r.degradedMs += modeMs(r, "degraded", at);
    r.panicMs += modeMs(r, "panic", at);
  }

  /** The summary as of the range's end; the builder is left as it was (finish may be called again). */
  finish(): TimelineSummary {
    const span = Math.max(1, this.to - this.from);
    const routes = new Map<string, RouteSummary>();
    const meanShareOf = new Map<string, number[]>();
    for (const [name, r] of this.routes) {
      const shares: Record<string, number> = {};
      for (const [lineId, m] of r.members) {
        const share = (m.weightMs + m.weight * (this.to - m.since)) / 10_000 / span;
        shares[lineId] = share;
        meanShareOf.set(lineId, [...(meanShareOf.get(lineId) ?? []), share]);
      }
      let worst: RouteSummary["versionsPerHour"]["worst"] = null;
      r.perHour.forEach((versions, i) => {
        if (versions > 0 && (worst === null || versions > worst.versions)) worst = { hour: this.from + i * HOUR, versions };
      });
      routes.set(name, {
        versions: r.versions,
        versionsPerHour: { mean: r.versions / (span / HOUR), worst },
        degradedMs: r.degradedMs + modeMs(r, "degraded", this.to),
        panicMs: r.panicMs + modeMs(r, "panic", this.to),
        shares,
      });
    }
    const lines = new Map<string, LineSummary>();
    const factors = new Map<string, { at: number; factor: number }[]>();
    const shares = new Map<string, { at: number; share: number }[]>();
    const points = new Map<string, LinePoint[]>();
    for (const [id, t] of this.lines) {
      const stateMs = { ...t.stateMs, [t.state]: (t.stateMs[t.state] ?? 0) + (this.to - t.stateSince) };
      const perRoute = meanShareOf.get(id) ?? [];
      lines.set(id, {
        cooldowns: [...t.cooldowns],
        stateMs,
        meanShare: perRoute.length === 0 ? 0 : perRoute.reduce((a, b) => a + b, 0) / perRoute.length,
        zeroWeight: t.zero.map((z) => ({ ...z })),
      });
      factors.set(id, [...t.factors]);
      shares.set(id, [...t.shares]);
      if (t.points) points.set(id, [...t.points]);
    }
    return { lines, routes, factors, shares, points };
  }
}

/** Time spent in `mode` since the route's current mode began, up to `at`. */
const modeMs = (r: RouteTrack, mode: TableMode, at: number): number => (r.mode === mode ? at - r.modeSince : 0);

/** A line's share: its weight / 10000 averaged over its routes. */
function shareOf(t: LineTrack): number {
  if (t.weights.size === 0) return 0;
  let sum = 0;
  for (const w of t.weights.values()) sum += w;
  return sum / 10_000 / t.weights.size;
}
