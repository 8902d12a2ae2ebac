// The dashboard's overview, read once for every viewer: every line's status, trend and live cell, the
// routes' tables as shares, the timeline and the samples.
import {
  applicableSamples,
  DEFAULT_LIVE_WINDOWS,
  type HealthState,
  type LineStatus,
  type LiveWindow,
  linePolicy,
  lineStatus,
  liveVerdict,
  type RouteTable,
  routeWarnings,
  type Sample,
  type SampleScoreSum,
  type StatusTone,
  summarizeLive,
  summedLineScore,
  unprobedKind,
} from "@linewatch/core";
import {
  dashboardFingerprint,
  type EventRow,
  LENGTH_BINS,
  type LengthBin,
  type LineActivity,
  type LineBucket,
  type LineHealthRow,
  lineActivity,
  listEvents,
  listLineHealth,
  listSamples,
  outcomeWindowsSince,
} from "@linewatch/db";
import type { AppDeps } from "../../deps";
import type { Engine } from "../../engine";
import type { CachedLine, CachedRoute } from "../../registry-cache";
import { WindowAggregates } from "./window-aggregates";

/** Time windows the dashboard offers (hours). */
export const WINDOWS = [1, 6, 24] as const;
export type WindowHours = (typeof WINDOWS)[number];
/** Points of a score trend per line, and columns of the completeness heatmap, whatever the window. */
export const TREND_POINTS = 72;
export const HEAT_COLUMNS = 24;
const EVENTS_SHOWN = 60;
/** docs/api.md: a probe's timeout defaults to the sample's, else 10 s. */
const DEFAULT_PROBE_TIMEOUT_MS = 10_000;
const LATE_SLACK_MS = 60_000;

/** Worst first: what an operator must look at is at the top of every per-line panel. */
const SEVERITY: Record<HealthState, number> = { cooldown: 0, degraded: 1, unprobed: 2, probation: 3, healthy: 4, drained: 5, disabled: 6 };

export interface LineView {
  id: string;
  name: string;
  tier: string;
  protocol: string;
  model: string;
  adminState: string;
  state: HealthState;
  /** How to colour the line: by its state (a line at weight 0 never shows in the colour of a good score). */
  tone: StatusTone;
  since: number;
  weightFactor: number;
  /** The stored line score: the mean of the last 10 minutes (as GET /v1/lines/:id/health), null without probes. */
  score: number | null;
  routes: { route: string; baseWeight: number; weight: number }[];
  last: LineActivity["last"];
  cooldownUntil: number | null;
  probation: { stage: number; factor: number } | null;
  holdUntil: number | null;
  fastProbeUntil: number | null;
  /** Sample-weighted mean probe score per trend bucket (TREND_POINTS of them), null: no probe. */
  trend: (number | null)[];
  /** Mean field completeness (0–1) per heatmap column, null: no probe. */
  fields: (number | null)[];
  /** Answers per content-length bin over the window (see LENGTH_BINS). */
  lengths: number[];
  /** Live answers the routers reported over the recent window, next to the probe score; null: none. */
  live: LiveCell | null;
}

export interface LiveCell {
  requests: number;
  successRate: number;
  failureRate: number;
  silentRate: number;
  suspect: boolean;
  reason: string;
}

/** The live cell of a line: the same summary and verdict as GET /v1/lines/:id/health. */
export function liveCell(windows: LiveWindow[], now: number): LiveCell | null {
  const summary = summarizeLive(windows, now);
  const r = summary.recent;
  if (r.successRate === null) return null;
  const verdict = liveVerdict(summary);
  return {
    requests: r.requests,
    successRate: r.successRate,
    failureRate: r.failureRate,
    silentRate: r.silentRate,
    suspect: verdict.suspect,
    reason: verdict.reason,
  };
}

export interface RouteView {
  name: string;
  version: number | null;
  generatedAt: string | null;
  mode: string | null;
  freeShareCap: number;
  onAllDown: string;
  warnings: string[];
  /** Every member line, the ones the table leaves out (weight 0) included. */
  members: { id: string; name: string; tier: string; protocol: string; state: HealthState; baseWeight: number; weight: number }[];
}

export interface EventView {
  id: number;
  at: number;
  kind: string;
  lineId: string | null;
  subject: string;
  change: string;
  reason: string;
}

export interface SampleView {
  id: string;
  name: string;
  protocol: string;
  routes: string[];
  source: string;
  weight: number;
}

export interface Overview {
  now: number;
  hours: WindowHours;
  start: number;
  bucketMs: number;
  heatMs: number;
  lines: LineView[];
  routes: RouteView[];
  events: EventView[];
  samples: SampleView[];
  counts: Partial<Record<HealthState, number>>;
  /** The database state this overview was read at (see dashboardFingerprint). */
  fingerprint: string;
}

interface Stored {
  /** Live outcome windows of the recent window, per line (docs/live-evidence.md). */
  live: Map<string, LiveWindow[]>;
  health: LineHealthRow[];
  activity: LineActivity[];
  buckets: LineBucket[];
  bins: LengthBin[];
  events: EventRow[];
  samples: SampleView[];
}

/** Bucket sizes for a window: TREND_POINTS trend buckets, HEAT_COLUMNS heatmap columns. */
export function windowGeometry(hours: WindowHours, now: number) {
  const windowMs = hours * 3_600_000;
  const bucketMs = windowMs / TREND_POINTS;
  const heatMs = windowMs / HEAT_COLUMNS;
  // Aligned to the heatmap columns (which hold whole trend buckets), the newest one in progress.
  const start = (Math.floor(now / heatMs) + 1) * heatMs - windowMs;
  return { bucketMs, heatMs, start };
}

const pct = (f: number) => `${Math.round(f * 100)}%`;

export function describeEvent(e: EventRow, lineNames: Map<string, string>): EventView {
  const d = e.data as Record<string, unknown>;
  const lineName = (typeof d.line === "string" ? d.line : null) ?? (e.lineId ? lineNames.get(e.lineId) : null) ?? null;
  let change = "";
  if (e.kind === "state_change") change = `${String(d.from)} → ${String(d.to)}`;
  else if (e.kind === "weight_change" && typeof d.from === "number" && typeof d.to === "number")
    change = `weight ${pct(d.from)} → ${pct(d.to)}`;
  else if (e.kind === "trend_alert" && typeof d.from === "number" && typeof d.to === "number")
    change = `score ${d.from.toFixed(0)} → ${d.to.toFixed(0)}`;
  else if (e.kind === "table_published")
    change = `v${d.previousVersion ?? "–"} → v${String(d.version)}${d.mode && d.mode !== "normal" ? ` (${String(d.mode)})` : ""}`;
  else if (e.kind === "fingerprint") change = d.moved === true ? "fingerprint moved" : "fingerprint back";
  else if (e.kind === "usage") change = d.failing === true ? "usage inflated" : "usage back";
  else if (e.kind === "shape_change") change = "shape changed";
  return { id: e.id, at: e.at.getTime(), kind: e.kind, lineId: e.lineId, subject: lineName ?? e.routeName ?? "", change, reason: e.reason };
}

/**
 * Reads what the overview shows. The database part is shared by every viewer and recomputed only
 * when something changed (the fingerprint) and at most every `minAgeMs`: ten browsers on a
 * 200-line fleet cost one set of aggregate queries per few seconds, not ten.
 */
export class OverviewData {
  private cache = new Map<WindowHours, { fingerprint: string; at: number; stored: Stored; now: number }>();
  private loading = new Map<WindowHours, Promise<{ stored: Stored; now: number; fingerprint: string }>>();
  private aggregates = new Map<WindowHours, WindowAggregates>();

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock">,
    private readonly engine: Engine,
    private readonly minAgeMs = 4_000,
  ) {}

  /** After a change made through the dashboard itself: the next page shows it at once (history stays). */
  invalidate(): void {
    this.cache.clear();
  }

  fingerprint(): Promise<string> {
    return dashboardFingerprint(this.deps.database.db);
  }

  async load(hours: WindowHours): Promise<Overview> {
    const { stored, now, fingerprint } = await this.stored(hours);
    return { ...(await this.assemble(hours, stored, now)), fingerprint };
  }

  private async stored(hours: WindowHours): Promise<{ stored: Stored; now: number; fingerprint: string }> {
    const fingerprint = await this.fingerprint();
    const cached = this.cache.get(hours);
    // Cache age is wall time on purpose: it rate-limits work, it is not the domain's clock.
    if (cached && (cached.fingerprint === fingerprint || performance.now() - cached.at < this.minAgeMs)) return cached;
    let pending = this.loading.get(hours);
    if (!pending) {
      pending = this.query(hours).then((r) => {
        const entry = { fingerprint, at: performance.now(), ...r };
        this.cache.set(hours, entry);
        return entry;
      });
      pending.finally(() => this.loading.delete(hours)).catch(() => {});
      this.loading.set(hours, pending);
    }
    return pending;
  }

  private async query(hours: WindowHours): Promise<{ stored: Stored; now: number }> {
    const db = this.deps.database.db;
    const now = this.deps.clock.now();
    const { bucketMs, heatMs, start } = windowGeometry(hours, now);
    let aggregates = this.aggregates.get(hours);
    if (!aggregates) {
      aggregates = new WindowAggregates(bucketMs, heatMs);
      this.aggregates.set(hours, aggregates);
    }
    await aggregates.refresh(db, start, now, await this.lateMs());
    const health = await listLineHealth(db);
    const activity = await lineActivity(db);
    const events = await listEvents(db, { limit: EVENTS_SHOWN });
    const samples = (await listSamples(db)).map((s) => ({
      id: s.id,
      name: s.name,
      protocol: s.protocol,
      routes: s.routes,
      source: s.source,
      weight: s.weight,
    }));
    const since = new Date(now - DEFAULT_LIVE_WINDOWS.recentMs - DEFAULT_LIVE_WINDOWS.baselineMs);
    const live = await outcomeWindowsSince(db, since);
    return { stored: { live, health, activity, ...aggregates.snapshot(), events, samples }, now };
  }

  /** How long after its start a probe's result may still arrive: the longest timeout in use, plus slack. */
  private async lateMs(): Promise<number> {
    const snapshot = await this.engine.registry.get();
    let longest = DEFAULT_PROBE_TIMEOUT_MS;
    for (const l of snapshot.lines.values()) longest = Math.max(longest, l.timeoutMs ?? 0);
    for (const s of snapshot.samples.values()) longest = Math.max(longest, s.timeoutMs ?? 0);
    return longest + LATE_SLACK_MS;
  }

  private async assemble(hours: WindowHours, stored: Stored, queriedAt: number): Promise<Omit<Overview, "fingerprint">> {
    const snapshot = await this.engine.registry.get();
    const now = this.deps.clock.now();
    const geometry = windowGeometry(hours, queriedAt);
    const charts = lineCharts(stored, geometry, snapshot.samples);
    const healthById = new Map(stored.health.map((h) => [h.lineId, h.health]));
    const activityById = new Map(stored.activity.map((a) => [a.lineId, a]));
    const tableWeight = (route: string, lineId: string) =>
      this.engine.publisher.view(route)?.lines.find((l) => l.id === lineId)?.weight ?? 0;

    const lines: LineView[] = [...snapshot.lines.values()].map((line) => ({
      ...lineStatusView(line, lineStatus(line.adminState, healthById.get(line.id) ?? null, linePolicy(line, snapshot.routes), now), now),
      routes: line.routes.map((m) => ({ route: m.route, baseWeight: m.weight, weight: tableWeight(m.route, line.id) })),
      last: activityById.get(line.id)?.last ?? null,
      trend: charts.trend.get(line.id) ?? new Array<number | null>(TREND_POINTS).fill(null),
      fields: charts.fields.get(line.id) ?? new Array<number | null>(HEAT_COLUMNS).fill(null),
      lengths: charts.lengths.get(line.id) ?? new Array<number>(LENGTH_BINS + 2).fill(0),
      live: liveCell(stored.live.get(line.id) ?? [], queriedAt),
    }));
    lines.sort((a, b) => SEVERITY[a.state] - SEVERITY[b.state] || (a.score ?? 101) - (b.score ?? 101) || a.name.localeCompare(b.name));

    const routes = [...snapshot.routes.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((r) => routeView(r, [...snapshot.lines.values()], lines, this.engine.publisher.view(r.name), [...snapshot.samples.values()]));
    const names = new Map(lines.map((l) => [l.id, l.name]));
    const counts: Partial<Record<HealthState, number>> = {};
    for (const l of lines) counts[l.state] = (counts[l.state] ?? 0) + 1;
    return {
      now,
      hours,
      ...geometry,
      lines,
      routes,
      events: stored.events.map((e) => describeEvent(e, names)),
      samples: stored.samples,
      counts,
    };
  }
}

/** What a line's row shows of its status (core lineStatus): the state, tone, score and what holds its weight down. */
function lineStatusView(line: CachedLine, view: LineStatus, now: number) {
  return {
    id: line.id,
    name: line.name,
    tier: line.tier,
    protocol: line.protocol,
    model: line.model,
    adminState: line.adminState,
    state: view.state,
    tone: view.tone,
    since: view.since,
    weightFactor: view.factor,
    score: view.score,
    cooldownUntil: view.cooldownUntil,
    probation: view.probationStage !== null ? { stage: view.probationStage, factor: view.probationFactor ?? 0 } : null,
    holdUntil: view.holdUntil !== null && view.holdUntil > now ? view.holdUntil : null,
    fastProbeUntil: view.fastProbeUntil !== null && view.fastProbeUntil > now ? view.fastProbeUntil : null,
  };
}

/**
 * Per line: the score trend (core summedLineScore over each bucket's per-sample sums, with the samples'
 * weights; one the registry does not hold yet counts 1), the mean field completeness per heatmap column, and
 * the answers per content-length bin.
 */
function lineCharts(
  stored: Pick<Stored, "buckets" | "bins">,
  { bucketMs, heatMs, start }: ReturnType<typeof windowGeometry>,
  samples: ReadonlyMap<string, Sample>,
) {
  const parts = new Map<string, SampleScoreSum[][]>();
  const fieldSums = new Map<string, { sum: number; n: number }[]>();
  for (const b of stored.buckets) {
    const i = Math.floor((b.at - start) / bucketMs + 1e-9);
    if (i < 0 || i >= TREND_POINTS) continue;
    const buckets = parts.get(b.lineId) ?? Array.from({ length: TREND_POINTS }, (): SampleScoreSum[] => []);
    parts.set(b.lineId, buckets);
    buckets[i]?.push({ scoreSum: b.scoreSum, probes: b.probes, weight: samples.get(b.sampleId)?.weight });
    const cols = fieldSums.get(b.lineId) ?? Array.from({ length: HEAT_COLUMNS }, () => ({ sum: 0, n: 0 }));
    fieldSums.set(b.lineId, cols);
    const col = cols[Math.floor((b.at - start) / heatMs + 1e-9)];
    if (col) {
      col.sum += b.fieldsSum;
      col.n += b.probes;
    }
  }
  const trend = new Map([...parts].map(([lineId, buckets]) => [lineId, buckets.map((sums) => summedLineScore(sums))]));
  const fields = new Map(
    [...fieldSums].map(([lineId, cols]) => [lineId, cols.map((c) => (c.n === 0 ? null : Math.round((c.sum / c.n) * 100) / 100))]),
  );
  const lengths = new Map<string, number[]>();
  for (const b of stored.bins) {
    const bins = lengths.get(b.lineId) ?? new Array<number>(LENGTH_BINS + 2).fill(0);
    lengths.set(b.lineId, bins);
    const k = Math.max(0, Math.min(LENGTH_BINS + 1, b.bin)); // clamped into the bins
    bins[k] = (bins[k] ?? 0) + b.count;
  }
  return { trend, fields, lengths };
}

/** A route's table as shares, with every member line (the ones the table leaves out at weight 0 too) and its warnings. */
function routeView(route: CachedRoute, all: CachedLine[], lines: LineView[], table: RouteTable | null, samples: Sample[]): RouteView {
  const byId = new Map(lines.map((l) => [l.id, l]));
  const memberLines = all.filter((l) => l.routes.some((m) => m.route === route.name));
  const members = memberLines
    .map((l) => ({
      id: l.id,
      name: l.name,
      tier: l.tier,
      protocol: l.protocol,
      state: byId.get(l.id)?.state ?? "unprobed",
      baseWeight: l.routes.find((m) => m.route === route.name)?.weight ?? 0,
      weight: table?.lines.find((t) => t.id === l.id)?.weight ?? 0,
    }))
    .sort((a, b) => b.weight - a.weight || a.name.localeCompare(b.name));
  return {
    name: route.name,
    version: table?.version ?? null,
    generatedAt: table?.generatedAt ?? null,
    mode: table?.mode ?? null,
    freeShareCap: route.freeShareCap,
    onAllDown: route.onAllDown,
    warnings: routeWarnings(
      memberLines.map((l) => {
        const kind = unprobedKind(byId.get(l.id)?.state ?? "unprobed", applicableSamples(l, samples).length);
        return kind ? { ...l, unprobed: kind } : l;
      }),
      { freeShareCap: route.freeShareCap },
    ).map((w) => w.message),
    members,
  };
}
