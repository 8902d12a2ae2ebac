import { createRoute } from "@hono/zod-openapi";
import { ReplayReportSchema, ReplayRequestSchema } from "@linewatch/contract";
import { stream } from "hono/streaming";
import type { AppDeps } from "../../deps";
import type { Engine } from "../../engine";
import { ApiError, envelope } from "../../errors";
import { type ReplayRequest, resolveReplay, runReplay } from "../../replay/run-replay";
import { createRouter, errorResponses, json, jsonBody } from "../common";

/** How often a streamed replay reports progress at most. */
const PROGRESS_EVERY_MS = 250;

export function replayRoutes(deps: AppDeps, engine: Engine) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: "post",
      path: "/",
      tags: ["replay"],
      summary: "Re-run a health policy over recorded probe results (SPEC §10); never writes",
      description:
        'With `Accept: application/x-ndjson` the answer is a stream of lines: `{"progress":{"done","total"}}` while it runs, then `{"report":…}` (or `{"error":…}`). Closing the connection aborts the replay.',
      request: jsonBody(ReplayRequestSchema),
      responses: { 200: json(ReplayReportSchema, "The report"), ...errorResponses },
    }),
    async (c) => {
      const body = c.req.valid("json") as ReplayRequest;
      const snapshot = await engine.registry.get();
      const signal = c.req.raw.signal;
      if (!(c.req.header("accept") ?? "").includes("application/x-ndjson")) {
        const report = await runReplay(deps, snapshot, body, { signal });
        return c.json(report, 200);
      }
      // Bad input is a 400 before the stream starts; only what fails later goes into the stream.
      resolveReplay(body, snapshot, deps.clock.now(), deps.config.retentionDays);
      c.header("content-type", "application/x-ndjson");
      return stream(c, async (out) => {
        let last = 0;
        try {
          const report = await runReplay(deps, snapshot, body, {
            signal,
            onProgress: (p) => {
              const t = Date.now();
              if (t - last < PROGRESS_EVERY_MS && p.done < p.total) return;
              last = t;
              void out.write(`${JSON.stringify({ progress: p })}\n`);
            },
          });
          await out.write(`${JSON.stringify({ report })}\n`);
        } catch (error) {
          if (signal.aborted) return;
          const e =
            error instanceof ApiError ? envelope(error.code, error.message, error.details) : envelope("internal", "the replay failed");
          if (!(error instanceof ApiError)) deps.logger.error("replay failed", { error: String(error) });
          await out.write(`${JSON.stringify(e)}\n`);
        }
      }) as never;
    },
  );
  return app;
}
