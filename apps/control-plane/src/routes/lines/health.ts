import { createRoute } from "@hono/zod-openapi";
import { ErrorSchema, IdParam, isUuid, LineHealthSchema, ProbeRunSchema } from "@linewatch/contract";
import {
  applicableSamples,
  averageComponents,
  isFastProbing,
  LINE_SCORE_WINDOW_MS,
  type LiveStats,
  linePolicy,
  lineStatus,
  probeIntervalMs,
  probesPerDay,
} from "@linewatch/core";
import { getLineHealth, latestLineResults, probeSpend, type StoredProbeResult } from "@linewatch/db";
import type { AppDeps } from "../../deps";
import type { Engine } from "../../engine";
import { ApiError, NotFoundError } from "../../errors";
import type { LiveView } from "../../live/live-service";

import { createRouter, errorResponses, json } from "../common";

const tags = ["lines"];
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function resultView(r: StoredProbeResult & { sampleName?: string }) {
  return {
    id: r.id,
    sampleId: r.sampleId,
    sample: r.sampleName ?? "",
    trigger: r.trigger,
    startedAt: new Date(r.startedAt).toISOString(),
    latencyMs: r.latencyMs,
    status: r.status,
    errorClass: r.errorClass,
    hardFailure: r.hardFailure,
    passed: r.passed,
    score: r.score,
    components: r.components,
    checks: r.checks,
    reasons: r.reasons,
    contentLength: r.contentLength,
    contentHash: r.contentHash,
    excerpt: r.excerpt,
    tokens: r.tokens,
  };
}

function statsView(s: LiveStats) {
  return { ...s, from: new Date(s.from).toISOString(), to: new Date(s.to - 1).toISOString() };
}

export function liveView(live: LiveView) {
  return {
    recent: statsView(live.summary.recent),
    baseline: statsView(live.summary.baseline),
    suspect: live.verdict.suspect,
    reason: live.verdict.reason,
  };
}

/** GET /v1/lines/:id/health and POST /v1/lines/:id/probe. */
export function lineHealthRoutes(deps: AppDeps, engine: Engine) {
  const app = createRouter();
  const db = deps.database.db;

  app.openapi(
    createRoute({
      method: "post",
      path: "/{id}/probe",
      tags,
      summary: "Probe the line now with every sample that applies; returns the results",
      request: { params: IdParam },
      responses: {
        200: json(ProbeRunSchema, "The probe results"),
        ...errorResponses,
        503: { content: { "application/json": { schema: ErrorSchema } }, description: "Probed, but the results could not be stored" },
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const snapshot = await engine.registry.get();
      const line = isUuid(id) ? snapshot.lines.get(id) : undefined;
      if (!line) throw new NotFoundError(`line ${id}`);
      const { results, notStored } = await engine.prober.probeNow(id);
      if (notStored > 0) {
        // The upstream was asked, but nothing of it is on record: say so instead of an empty 200.
        throw new ApiError(
          503,
          "unavailable",
          `the line was probed, but ${notStored} of ${notStored + results.length} results could not be stored (the database is unavailable); nothing was recorded for them`,
        );
      }
      return c.json({ results: results.map((r) => resultView({ ...r, sampleName: snapshot.samples.get(r.sampleId)?.name ?? "" })) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/{id}/health",
      tags,
      summary: "State, score, components, weight factor, cooldown, probing cost and recent probe results",
      request: { params: IdParam },
      responses: { 200: json(LineHealthSchema, "The line's health"), ...errorResponses },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const snapshot = await engine.registry.get();
      const line = isUuid(id) ? snapshot.lines.get(id) : undefined;
      if (!line) throw new NotFoundError(`line ${id}`);
      const now = deps.clock.now();
      const policy = linePolicy(line, snapshot.routes);
      const row = await getLineHealth(db, id);
      const health = row?.health ?? null;
      const view = lineStatus(line.adminState, health, policy, now);
      const recent = await latestLineResults(db, id, 50);
      const window = recent.filter((r) => r.startedAt >= now - LINE_SCORE_WINDOW_MS);
      const samples = applicableSamples(line, snapshot.samples.values());
      const interval = probeIntervalMs(line, samples.length, { fast: health !== null && isFastProbing(health, now) });
      const last24h = await probeSpend(db, id, new Date(now - 86_400_000));
      const perDay = probesPerDay(interval, samples.length);
      const live = await engine.live.view(id);
      return c.json(
        {
          lineId: line.id,
          name: line.name,
          adminState: line.adminState,
          state: view.state,
          tone: view.tone,
          serviceState: view.serviceState,
          since: new Date(view.since).toISOString(),
          score: view.score,
          components: averageComponents(window),
          weightFactor: view.factor,
          cooldown:
            view.cooldownUntil !== null ? { until: new Date(view.cooldownUntil).toISOString(), durationMs: view.cooldownMs ?? 0 } : null,
          probation: view.probationStage !== null ? { stage: view.probationStage, factor: view.probationFactor ?? 0 } : null,
          holdUntil: iso(view.holdUntil),
          fastProbeUntil: iso(view.fastProbeUntil),
          consecutiveFailures: view.consecutiveFailures,
          consecutivePasses: view.consecutivePasses,
          evidence: view.evidence,
          lengths: view.lengths,
          routes: line.routes.map((m) => {
            const table = engine.publisher.view(m.route);
            return {
              route: m.route,
              baseWeight: m.weight,
              weight: table?.lines.find((l) => l.id === line.id)?.weight ?? 0,
              tableVersion: table?.version ?? null,
            };
          }),
          probing: {
            samples: samples.map((s) => s.name),
            intervalSec: Math.round(interval / 100) / 10,
            probesPerDay: Math.round(perDay),
            last24h,
            tokensPerDay: last24h.probes > 0 ? Math.round((last24h.tokens / last24h.probes) * perDay) : 0,
          },
          recent: recent.slice(0, 20).map(resultView),
          live: liveView(live),
        },
        200,
      );
    },
  );

  return app;
}
