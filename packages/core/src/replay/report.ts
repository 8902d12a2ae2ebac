// The replay report: per line and per route, what the proposed policy would have done next to what
// did happen, and how each bad episode fared. Plain JSON with a fixed key order, times as ISO
// strings and numbers rounded, so the same history and policy give byte-identical reports.
import type { HealthState } from "../health/index";
import type { BadEpisode } from "./bad-episodes";
import type { ReplayRun } from "./policy-replay";
import type { LinePoint, LineSummary, ReplayLine, ReplayRoute, RouteSummary, TimelineSummary } from "./timeline";

/** Two timelines sending a line to weight 0 within this of each other did it at the same time. */
export const SAME_WITHIN_MS = 5_000;

export type EpisodeChange = "same" | "earlier" | "later" | "not at all" | "only proposed" | "neither";

export interface LineReportSide {
  cooldowns: { at: string; reason: string }[];
  /** Minutes per state. */
  stateMinutes: Partial<Record<HealthState, number>>;
  meanShare: number;
  zeroWeight: { from: string; to: string | null; reason: string }[];
}

export interface RouteReportSide {
  versions: number;
  versionsPerHour: { mean: number; worst: { hour: string; versions: number } | null };
  degradedMinutes: number;
  panicMinutes: number;
  /** Mean share per line name. */
  shares: Record<string, number>;
}

export interface EpisodeReport {
  line: string;
  from: string;
  to: string;
  failedProbes: number;
  /** When the line went to weight 0 within the episode (null: it did not), and the share-minutes it carried meanwhile. */
  actual: { downAt: string | null; shareMinutes: number };
  proposed: { downAt: string | null; shareMinutes: number };
  change: EpisodeChange;
  /** proposed downAt − actual downAt, in seconds, when both went down. */
  bySeconds: number | null;
}

export interface ReplayReport {
  range: { from: string; to: string };
  policy: Record<string, unknown>;
  results: number;
  notes: string[];
  lines: { id: string; name: string; actual: LineReportSide; proposed: LineReportSide }[];
  routes: { name: string; actual: RouteReportSide; proposed: RouteReportSide }[];
  episodes: EpisodeReport[];
  /** Share-minutes the bad episodes carried: sum over episodes; `change` = proposed − actual (negative: less traffic on bad lines). */
  badEpisodeShare: { actualShareMinutes: number; proposedShareMinutes: number; change: number };
  summary: { earlier: number; later: number; same: number; notAtAll: number; onlyProposed: number; neither: number };
  /** Every change of state and weight factor of the lines asked for, in both timelines. */
  timelines: { line: string; actual: TimelinePoint[]; proposed: TimelinePoint[] }[];
}

export interface TimelinePoint {
  at: string;
  state: HealthState;
  factor: number;
}

export interface ReportInput {
  from: number;
  to: number;
  /** Lines and routes to report (the replay may have run more, for their routes' tables). */
  lines: readonly ReplayLine[];
  routes: readonly ReplayRoute[];
  proposed: ReplayRun;
  actual: TimelineSummary;
  policy: Record<string, unknown>;
  notes: string[];
}

const iso = (ms: number): string => new Date(ms).toISOString();
const r = (x: number, digits: number): number => {
  const f = 10 ** digits;
  const v = Math.round(x * f) / f;
  return Object.is(v, -0) ? 0 : v;
};
const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function buildReport(input: ReportInput): ReplayReport {
  const { from, to, proposed, actual } = input;
  const lines = [...input.lines].sort(byName);
  const nameOf = new Map(lines.map((l) => [l.id, l.name]));
  const reported = new Set(lines.map((l) => l.id));
  const episodes = proposed.badEpisodes.filter((e) => reported.has(e.lineId)).map((e) => episode(e, nameOf, actual, proposed.summary));
  const count = (c: EpisodeChange) => episodes.filter((e) => e.change === c).length;
  const actualShare = episodes.reduce((a, e) => a + e.actual.shareMinutes, 0);
  const proposedShare = episodes.reduce((a, e) => a + e.proposed.shareMinutes, 0);
  const timelines = lines.flatMap((l) => {
    const a = actual.points.get(l.id);
    const p = proposed.summary.points.get(l.id);
    return a && p ? [{ line: l.name, actual: a.map(point), proposed: p.map(point) }] : [];
  });
  return {
    range: { from: iso(from), to: iso(to) },
    policy: input.policy,
    results: proposed.results,
    notes: input.notes,
    lines: lines.map((l) => ({
      id: l.id,
      name: l.name,
      actual: lineSide(actual.lines.get(l.id)),
      proposed: lineSide(proposed.summary.lines.get(l.id)),
    })),
    routes: [...input.routes].sort(byName).map((rt) => ({
      name: rt.name,
      actual: routeSide(actual.routes.get(rt.name), nameOf),
      proposed: routeSide(proposed.summary.routes.get(rt.name), nameOf),
    })),
    episodes,
    badEpisodeShare: {
      actualShareMinutes: r(actualShare, 2),
      proposedShareMinutes: r(proposedShare, 2),
      change: r(proposedShare - actualShare, 2),
    },
    summary: {
      earlier: count("earlier"),
      later: count("later"),
      same: count("same"),
      notAtAll: count("not at all"),
      onlyProposed: count("only proposed"),
      neither: count("neither"),
    },
    timelines,
  };
}

const point = (p: LinePoint): TimelinePoint => ({ at: iso(p.at), state: p.state, factor: r(p.factor, 4) });

function lineSide(s: LineSummary | undefined): LineReportSide {
  if (!s) return { cooldowns: [], stateMinutes: {}, meanShare: 0, zeroWeight: [] };
  const stateMinutes: Partial<Record<HealthState, number>> = {};
  for (const k of Object.keys(s.stateMs).sort() as HealthState[]) stateMinutes[k] = r((s.stateMs[k] ?? 0) / 60_000, 2);
  return {
    cooldowns: s.cooldowns.map((c) => ({ at: iso(c.at), reason: c.reason })),
    stateMinutes,
    meanShare: r(s.meanShare, 4),
    zeroWeight: s.zeroWeight.map((z) => ({ from: iso(z.from), to: z.to === null ? null : iso(z.to), reason: z.reason })),
  };
}

function routeSide(s: RouteSummary | undefined, nameOf: ReadonlyMap<string, string>): RouteReportSide {
  if (!s) return { versions: 0, versionsPerHour: { mean: 0, worst: null }, degradedMinutes: 0, panicMinutes: 0, shares: {} };
  const shares: Record<string, number> = {};
  const named = Object.entries(s.shares)
    .map(([id, share]) => [nameOf.get(id) ?? id, share] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  for (const [name, share] of named) shares[name] = r(share, 4);
  const worst = s.versionsPerHour.worst;
  return {
    versions: s.versions,
    versionsPerHour: {
      mean: r(s.versionsPerHour.mean, 2),
      worst: worst === null ? null : { hour: iso(worst.hour), versions: worst.versions },
    },
    degradedMinutes: r(s.degradedMs / 60_000, 2),
    panicMinutes: r(s.panicMs / 60_000, 2),
    shares,
  };
}

function episode(e: BadEpisode, nameOf: ReadonlyMap<string, string>, actual: TimelineSummary, proposed: TimelineSummary): EpisodeReport {
  const side = (t: TimelineSummary) => {
    const downAt = firstZero(t.factors.get(e.lineId) ?? [], e.from, e.to + SAME_WITHIN_MS);
    return { downAt, shareMinutes: integrate(t.shares.get(e.lineId) ?? [], e.from, e.to) / 60_000 };
  };
  const a = side(actual);
  const p = side(proposed);
  let change: EpisodeChange;
  let by: number | null = null;
  if (a.downAt === null) change = p.downAt === null ? "neither" : "only proposed";
  else if (p.downAt === null) change = "not at all";
  else {
    by = p.downAt - a.downAt;
    change = Math.abs(by) <= SAME_WITHIN_MS ? "same" : by < 0 ? "earlier" : "later";
  }
  return {
    line: nameOf.get(e.lineId) ?? e.lineId,
    from: iso(e.from),
    to: iso(e.to),
    failedProbes: e.failedProbes,
    actual: { downAt: a.downAt === null ? null : iso(a.downAt), shareMinutes: r(a.shareMinutes, 2) },
    proposed: { downAt: p.downAt === null ? null : iso(p.downAt), shareMinutes: r(p.shareMinutes, 2) },
    change,
    bySeconds: by === null ? null : r(by / 1000, 1),
  };
}

/** The first time within [from, until] the factor is 0 (from itself when it already is). */
function firstZero(changes: readonly { at: number; factor: number }[], from: number, until: number): number | null {
  let current: number | null = null;
  for (const c of changes) {
    if (c.at <= from) current = c.factor;
    else if (c.at > until) break;
    else if (current === 0) return from;
    else if (c.factor === 0) return c.at;
    else current = c.factor;
  }
  return current === 0 ? from : null;
}

/** ∫ share dt over [from, to], share a step function given by its changes. */
function integrate(changes: readonly { at: number; share: number }[], from: number, to: number): number {
  let total = 0;
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i];
    if (!c) continue;
    const end = changes[i + 1]?.at ?? Number.POSITIVE_INFINITY;
    const lo = Math.max(from, c.at);
    const hi = Math.min(to, end);
    if (hi > lo) total += c.share * (hi - lo);
  }
  return total;
}
