// A line's page on the dashboard: its health (as the API shows it), recent probes, events and the
// per-sample score chart.
import type { LineHealth } from "@linewatch/contract";
import type { Sample } from "@linewatch/core";
import { latestLineResults, lineScorePoints, listEvents, type ScorePoint, type StoredProbeResult } from "@linewatch/db";
import type { AppDeps } from "../../deps";
import type { Engine } from "../../engine";
import { lineHealth } from "./line-health";
import { describeEvent, type EventView, type WindowHours } from "./overview";

const RECENT_PROBES = 50;
const CHART_POINTS = 2000;
const LINE_EVENTS = 40;

export interface LinePage {
  line: {
    id: string;
    name: string;
    tier: string;
    protocol: string;
    model: string;
    /** Without userinfo or query values: some upstreams take their key in the URL. */
    baseUrl: string;
    adminState: string;
    hasApiKey: boolean;
    timeoutMs: number | null;
    dailyQuota: number | null;
    probeBudgetPct: number;
  };
  /** Header names only: values may be credentials. */
  headerNames: string[];
  health: LineHealth;
  recent: (StoredProbeResult & { sampleName: string })[];
  events: EventView[];
  chart: LineChart;
}

/** Probe scores for the chart: sample names, then per point its time (ms), sample index and score. */
export interface LineChart {
  start: number;
  end: number;
  samples: string[];
  t: number[];
  s: number[];
  v: number[];
}

/** A URL as safe to show: origin and path; credentials and query values never. */
export function displayUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? "?…" : ""}`;
  } catch {
    return "(invalid URL)";
  }
}

export async function loadLinePage(
  deps: Pick<AppDeps, "database" | "clock">,
  engine: Engine,
  id: string,
  hours: WindowHours,
): Promise<LinePage | null> {
  const health = await lineHealth(deps, engine, id);
  if (!health) return null;
  const snapshot = await engine.registry.get();
  const line = snapshot.lines.get(id);
  if (!line) return null;
  const db = deps.database.db;
  const now = deps.clock.now();
  const start = now - hours * 3_600_000;
  const recent = (await latestLineResults(db, id, RECENT_PROBES)).map((r) => ({ ...r, sampleName: r.sampleName ?? "" }));
  const points = await lineScorePoints(db, id, new Date(start), CHART_POINTS);
  const events = await listEvents(db, { lineId: id, limit: LINE_EVENTS });
  return {
    line: {
      id: line.id,
      name: line.name,
      tier: line.tier,
      protocol: line.protocol,
      model: line.model,
      baseUrl: displayUrl(line.baseUrl),
      adminState: line.adminState,
      hasApiKey: line.hasApiKey,
      timeoutMs: line.timeoutMs,
      dailyQuota: line.dailyQuota,
      probeBudgetPct: line.probeBudgetPct,
    },
    headerNames: Object.keys(line.headers).sort(),
    health,
    recent,
    events: events.map((e) => describeEvent(e, new Map([[line.id, line.name]]))),
    chart: lineChart(points, snapshot.samples, start, now),
  };
}

function lineChart(points: ScorePoint[], samples: ReadonlyMap<string, Sample>, start: number, end: number): LineChart {
  // The chart's samples by name; each point refers to its sample by rank in that order.
  const chartSamples = [...new Set(points.map((p) => p.sampleId))]
    .map((id) => ({ id, name: samples.get(id)?.name ?? id.slice(0, 8) }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const rank = new Map(chartSamples.map((s, pos) => [s.id, pos]));
  return {
    start,
    end,
    samples: chartSamples.map((s) => s.name),
    t: points.map((p) => p.at),
    s: points.map((p) => rank.get(p.sampleId) ?? 0),
    v: points.map((p) => Math.round(p.score * 10) / 10),
  };
}
