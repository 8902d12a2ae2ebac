import { createRoute } from "@hono/zod-openapi";
import { MAX_WINDOW_AGE_MS, MAX_WINDOW_FUTURE_MS, OutcomeAckSchema, OutcomeReportSchema } from "@linewatch/contract";
import type { AppDeps } from "../../deps";
import type { Engine } from "../../engine";
import { ValidationError } from "../../errors";
import { createRouter, errorResponses, json } from "../common";

/** POST /v1/outcomes: routers report live-traffic outcomes per line (SPEC §9; router tokens only, auth.ts). */
export function outcomeRoutes(deps: AppDeps, engine: Engine) {
  const app = createRouter();
  app.openapi(
    createRoute({
      method: "post",
      path: "/",
      tags: ["outcomes"],
      summary: "Routers report live-traffic outcomes per line; idempotent per router and window",
      request: { body: { content: { "application/json": { schema: OutcomeReportSchema } }, required: true } },
      responses: { 200: json(OutcomeAckSchema, "Stored (or seen before)"), ...errorResponses },
    }),
    async (c) => {
      const report = c.req.valid("json");
      const now = deps.clock.now();
      const start = Date.parse(report.windowStart);
      const end = Date.parse(report.windowEnd);
      if (end < start) throw ValidationError.field("windowEnd", "must not be before windowStart");
      if (end > now + MAX_WINDOW_FUTURE_MS || end < now - MAX_WINDOW_AGE_MS) {
        throw ValidationError.field("windowEnd", "must be within the last 24 h and at most 5 min ahead of the control plane's clock");
      }
      const snapshot = await engine.registry.get();
      const seen = new Set<string>();
      for (const [i, l] of report.lines.entries()) {
        if (!snapshot.lines.has(l.lineId)) throw ValidationError.field(`lines.${i}.lineId`, `no line ${l.lineId}`);
        if (seen.has(l.lineId)) throw ValidationError.field(`lines.${i}.lineId`, "listed twice in one report");
        seen.add(l.lineId);
      }
      const { stored } = await engine.live.receive(report);
      return c.json({ stored: stored.length, duplicate: report.lines.length > 0 && stored.length === 0 }, 200);
    },
  );
  return app;
}
