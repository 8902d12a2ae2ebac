import { OpenAPIHono } from "@hono/zod-openapi";
import { WebhookBodySchema } from "@linewatch/contract";
import { errorSummary, isConnectionError } from "@linewatch/db";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { type AuthEnv, authMiddleware, type TokenStore } from "./auth";
import { dashboardRoutes } from "./dashboard/index";
import type { AppDeps } from "./deps";
import { ApiError, envelope } from "./errors";
import { RateLimitedLog } from "./logger";
import { eventRoutes } from "./routes/events/index";
import { lineHealthRoutes } from "./routes/lines/health";
import { lineRoutes } from "./routes/lines/index";
import { outcomeRoutes } from "./routes/outcomes/index";
import { replayRoutes } from "./routes/replay/index";
import { routeRoutes } from "./routes/routes/index";
import { sampleRoutes } from "./routes/samples/index";
import { renderDocsPage } from "./routes/system/docs-page";
import { favicon } from "./routes/system/favicon";
import { systemRoutes } from "./routes/system/index";
import { tableRoutes } from "./routes/tables/index";
import { tokenRoutes } from "./routes/tokens/index";
import { webhookRoutes } from "./routes/webhooks/index";
import type { Services } from "./services/index";

export const MAX_BODY_BYTES = 1024 * 1024;
/** At most one "database unavailable" line per this long, however many requests fail. */
const OUTAGE_LOG_INTERVAL_MS = 30_000;

/**
 * The HTTP layer over the services: every route is the contract's schema in, one service call, JSON
 * out. `auth` is the token cache requests are authenticated with (the token service keeps it current).
 */
export function createApp(deps: AppDeps, services: Services, auth: TokenStore) {
  const app = new OpenAPIHono<AuthEnv>();
  const outageLog = new RateLimitedLog(deps.clock, OUTAGE_LOG_INTERVAL_MS);

  app.onError((error, c) => {
    if (error instanceof ApiError) return c.json(envelope(error.code, error.message, error.details), error.status);
    if (error instanceof HTTPException && error.status < 500) {
      // Hono's own 4xx (e.g. malformed JSON from the validator).
      return c.json(envelope("invalid_request", error.message), 400);
    }
    if (isConnectionError(error)) {
      // An outage fails every request: one log line per interval says so, not one per request.
      outageLog.note((skipped) =>
        deps.logger.error("database unavailable", { ...errorSummary(error), path: c.req.path, alsoFailed: skipped }),
      );
      return c.json(envelope("unavailable", "the database is unavailable; try again shortly"), 503, { "retry-after": "5" });
    }
    // The path, not the query string (it may carry a token or a value); the error's kind, not its parameters.
    deps.logger.error("unhandled error", { path: c.req.path, method: c.req.method, ...errorSummary(error) });
    return c.json(envelope("internal", "internal error"), 500);
  });
  app.notFound((c) => c.json(envelope("not_found", `no route for ${c.req.method} ${c.req.path}`), 404));

  systemRoutes(app, deps, services.system);

  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    // The rest of the body is never read: close the connection so it cannot be reused half-read.
    onError: (c) => c.json(envelope("payload_too_large", `request body over ${MAX_BODY_BYTES} bytes`), 413, { connection: "close" }),
  });
  // No handler reads the body of a GET or HEAD; asking for it costs the node server a whole Request
  // object per call, which was most of what a table answer cost over a health check.
  app.use("/v1/*", (c, next) => (c.req.method === "GET" || c.req.method === "HEAD" ? next() : limitBody(c, next)));
  app.use("/v1/*", authMiddleware(auth));
  // Public unless LINEWATCH_METRICS_PUBLIC=false (auth.ts isPublicPath); the dashboard checks its own cookie.
  app.use("/metrics", authMiddleware(auth));

  app.route("/v1/lines", lineRoutes(services));
  app.route("/v1/lines", lineHealthRoutes(services));
  app.route("/v1/tables", tableRoutes(services));
  app.route("/v1/events", eventRoutes(services));
  app.route("/v1/outcomes", outcomeRoutes(services));
  app.route("/v1/tokens", tokenRoutes(services));
  app.route("/v1/webhooks", webhookRoutes(services));
  app.route("/v1/samples", sampleRoutes(services));
  app.route("/v1/routes", routeRoutes(services));
  app.route("/v1/replay", replayRoutes(services, deps.logger));

  const docConfig = {
    openapi: "3.1.0",
    info: {
      title: "linewatch control plane",
      version: "1",
      description: "Probes LLM upstream lines with golden samples, scores their content and publishes weight tables for routers.",
    },
    security: [{ bearer: [] }],
  };
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  // What a webhook receiver is sent is no route's answer: described here for receivers (docs/alerts.md#payload).
  app.openAPIRegistry.register("WebhookBody", WebhookBodySchema);
  app.doc31("/openapi.json", docConfig);
  app.get("/docs", (c) => c.html(renderDocsPage(app.getOpenAPI31Document(docConfig))));
  app.get("/favicon.svg", favicon);
  app.get("/favicon.ico", favicon);
  app.get("/metrics", async (c) => {
    const { body, contentType } = await services.system.metrics();
    return c.body(body, 200, { "content-type": contentType });
  });
  app.route("/", dashboardRoutes(deps, services));

  return app;
}

export type App = ReturnType<typeof createApp>;
