// POST /v1/replay: the request in, one service call (services/replay.ts), the report out as JSON or,
// with `Accept: application/x-ndjson`, as a stream of progress lines then the report.
import { createRoute } from "@hono/zod-openapi";
import { ReplayReportSchema, ReplayRequestSchema } from "@linewatch/contract";
import type { Context } from "hono";
import { stream } from "hono/streaming";
import type { AuthEnv } from "../../auth";
import { ApiError, envelope } from "../../errors";
import type { Logger } from "../../logger";
import type { Services } from "../../services/index";
import type { PreparedReplay } from "../../services/replay";
import { createRouter, errorResponses, json, jsonBody } from "../common";

/** How often a streamed replay reports progress at most. */
const PROGRESS_EVERY_MS = 250;

const replay = createRoute({
  method: "post",
  path: "/",
  tags: ["replay"],
  summary: "Re-run a health policy over recorded probe results (docs/replay.md); never writes",
  description:
    'With `Accept: application/x-ndjson` the answer is a stream of lines: `{"progress":{"done","total"}}` while it runs, then `{"report":…}` (or `{"error":…}`). Closing the connection aborts the replay.',
  request: jsonBody(ReplayRequestSchema),
  responses: { 200: json(ReplayReportSchema, "The report"), ...errorResponses },
});

export function replayRoutes({ replay: replays }: Pick<Services, "replay">, logger: Logger) {
  return createRouter().openapi(replay, async (c) => {
    // Bad input is a 400 before anything runs (and before a stream starts); only what fails later goes into the stream.
    const prepared = await replays.prepare(c.req.valid("json"));
    const signal = c.req.raw.signal;
    if (!(c.req.header("accept") ?? "").includes("application/x-ndjson")) return c.json(await prepared.run({ signal }), 200);
    // The stream is a plain Response: the route's typed responses describe the JSON answer, which /openapi.json documents.
    return streamReplay(c, prepared, logger) as never;
  });
}

/** Progress lines while it runs (at most every PROGRESS_EVERY_MS), then the report or the error's envelope. */
function streamReplay(c: Context<AuthEnv>, prepared: PreparedReplay, logger: Logger): Response {
  const signal = c.req.raw.signal;
  c.header("content-type", "application/x-ndjson");
  return stream(c, async (out) => {
    let last = 0;
    try {
      const report = await prepared.run({
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
      const e = error instanceof ApiError ? envelope(error.code, error.message, error.details) : envelope("internal", "the replay failed");
      if (!(error instanceof ApiError)) logger.error("replay failed", { error: String(error) });
      await out.write(`${JSON.stringify(e)}\n`);
    }
  });
}
