// A line's health as GET /v1/lines/:id/health and the line's page show it: its status (core
// lineStatus), the components behind its score, its weight per route, what probing it costs, its
// recent probes and live evidence.
import type { LineHealth, LineRelay } from "@linewatch/contract";
import {
  applicableSamples,
  averageComponents,
  type Health,
  isFastProbing,
  LINE_SCORE_WINDOW_MS,
  type LineStatus,
  linePolicy,
  lineStatus,
  probeIntervalMs,
  probesPerDay,
  type Sample,
  type ScoreComponents,
  shapeChangedRecently,
} from "@linewatch/core";
import { billingEvidence, getLineHealth, latestLineResults, probeSpend } from "@linewatch/db";
import type { AppDeps } from "../../deps";
import type { Engine } from "../../engine";
import type { CachedLine } from "../../registry-cache";
import { liveView, resultView } from "./probe-results";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const DAY_MS = 86_400_000;

/** The line's health, or null when there is no such line. */
export async function lineHealth(deps: Pick<AppDeps, "database" | "clock">, engine: Engine, id: string): Promise<LineHealth | null> {
  const snapshot = await engine.registry.get();
  const line = snapshot.lines.get(id);
  if (!line) return null;
  const db = deps.database.db;
  const now = deps.clock.now();
  const health = (await getLineHealth(db, id))?.health ?? null;
  const view = lineStatus(line.adminState, health, linePolicy(line, snapshot.routes), now);
  const recent = await latestLineResults(db, id, 50);
  const samples = applicableSamples(line, snapshot.samples.values());
  return {
    lineId: line.id,
    name: line.name,
    adminState: line.adminState,
    ...statusView(view, averageComponents(recent.filter((r) => r.startedAt >= now - LINE_SCORE_WINDOW_MS))),
    routes: routeWeights(engine, line),
    probing: await probing(deps, line, samples, health, now),
    recent: recent.slice(0, 20).map(resultView),
    live: liveView(await engine.live.view(id)),
    relay: await relayView(deps, view, health, snapshot.samples, id, now),
  };
}

/** What a relay can fake, for this line (docs/scoring.md#what-a-relay-can-fake): verdicts, anchors, billing evidence. */
async function relayView(
  deps: Pick<AppDeps, "database">,
  view: LineStatus,
  health: Health | null,
  samples: ReadonlyMap<string, Sample>,
  lineId: string,
  now: number,
): Promise<LineRelay> {
  const name = (id: string) => samples.get(id)?.name ?? id;
  const since = new Date(now - DAY_MS);
  const b = await billingEvidence(deps.database.db, lineId, since);
  const expected = b.expectedInput + b.expectedOutput;
  return {
    fingerprints: Object.entries(view.fingerprints).map(([sampleId, f]) => ({
      sampleId,
      sample: name(sampleId),
      own: f.own,
      peers: f.peers,
      threshold: f.threshold,
      failing: f.failing,
      variants: Object.entries(f.variants).map(([variant, v]) => ({ variant, ...v })),
    })),
    usage: Object.entries(view.usage).map(([sampleId, u]) => ({ sampleId, sample: name(sampleId), ...u })),
    shape:
      view.shape === null
        ? null
        : {
            ...view.shape,
            changedAt: iso(view.shape.changedAt),
            recentlyChanged: shapeChangedRecently(health?.shape, now),
          },
    billing: {
      since: since.toISOString(),
      ...b,
      inflation: expected > 0 ? Math.round(((b.claimedInput + b.claimedOutput) / expected) * 1000) / 1000 : null,
    },
  };
}

/** What core's lineStatus says, on the wire, with the components behind the score. */
function statusView(view: LineStatus, components: ScoreComponents | null) {
  return {
    state: view.state,
    tone: view.tone,
    serviceState: view.serviceState,
    since: new Date(view.since).toISOString(),
    score: view.score,
    components,
    weightFactor: view.factor,
    cooldown: view.cooldownUntil !== null ? { until: new Date(view.cooldownUntil).toISOString(), durationMs: view.cooldownMs ?? 0 } : null,
    probation: view.probationStage !== null ? { stage: view.probationStage, factor: view.probationFactor ?? 0 } : null,
    holdUntil: iso(view.holdUntil),
    fastProbeUntil: iso(view.fastProbeUntil),
    consecutiveFailures: view.consecutiveFailures,
    consecutivePasses: view.consecutivePasses,
    evidence: view.evidence,
    lengths: view.lengths,
  };
}

/** The line's weight in each route's published table (0 when the table leaves it out). */
function routeWeights(engine: Engine, line: CachedLine) {
  return line.routes.map((m) => {
    const table = engine.publisher.view(m.route);
    return {
      route: m.route,
      baseWeight: m.weight,
      weight: table?.lines.find((l) => l.id === line.id)?.weight ?? 0,
      tableVersion: table?.version ?? null,
    };
  });
}

/** The samples that apply, the interval they are sent at, and what that costs a day. */
async function probing(deps: Pick<AppDeps, "database">, line: CachedLine, samples: Sample[], health: Health | null, now: number) {
  const interval = probeIntervalMs(line, samples.length, { fast: health !== null && isFastProbing(health, now) });
  const last24h = await probeSpend(deps.database.db, line.id, new Date(now - DAY_MS));
  const perDay = probesPerDay(interval, samples.length);
  return {
    samples: samples.map((s) => s.name),
    intervalSec: Math.round(interval / 100) / 10,
    probesPerDay: Math.round(perDay),
    last24h,
    tokensPerDay: last24h.probes > 0 ? Math.round((last24h.tokens / last24h.probes) * perDay) : 0,
  };
}
