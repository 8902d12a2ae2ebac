import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { LiveSchema, NotReadySchema, ReadySchema } from "@linewatch/contract";
import type { AuthEnv } from "../../auth";
import type { AppDeps } from "../../deps";
import { envelope } from "../../errors";
import type { SystemService } from "../../services/system";
import { json } from "../common";

/** Public: no token, whatever the token store holds (auth.ts isPublicPath). */
const PUBLIC: { [name: string]: string[] }[] = [];

/**
 * The service endpoints (docs/api.md): /healthz and /readyz here, and the description of those served
 * elsewhere (/metrics, /openapi.json, /docs, the dashboard at /) so /openapi.json lists every path.
 */
export function systemRoutes(app: OpenAPIHono<AuthEnv>, deps: Pick<AppDeps, "config">, system: SystemService): void {
  app.openapi(
    createRoute({
      method: "get",
      path: "/healthz",
      tags: ["service"],
      summary: "Liveness: the process answers (the database is not asked)",
      security: PUBLIC,
      responses: { 200: json(LiveSchema, "Alive") },
    }),
    (c) => c.json({ status: "ok" as const }, 200),
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/readyz",
      tags: ["service"],
      summary: "Readiness: the database answers within 3 s",
      security: PUBLIC,
      responses: { 200: json(ReadySchema, "Ready"), 503: json(NotReadySchema, "The database is unreachable") },
    }),
    async (c) => {
      const r = await system.readiness();
      if (r.ready) return c.json({ status: "ready" as const, database: "ok" as const, health: r.health }, 200);
      return c.json(
        { ...envelope("unavailable", "database unreachable"), status: "not ready" as const, database: r.database, health: r.health },
        503,
      );
    },
  );

  const text = (type: string, description: string) => ({ content: { [type]: { schema: z.string() } }, description });
  const registry = app.openAPIRegistry;
  registry.registerPath({
    method: "get",
    path: "/metrics",
    tags: ["service"],
    summary: "Prometheus metrics of this replica",
    description: "Public unless LINEWATCH_METRICS_PUBLIC=false; then an admin or viewer token.",
    security: deps.config.metricsPublic ? PUBLIC : [{ bearer: [] }],
    responses: { 200: text("text/plain", "Prometheus text exposition format 0.0.4") },
  });
  registry.registerPath({
    method: "get",
    path: "/openapi.json",
    tags: ["service"],
    summary: "This description of the API (OpenAPI 3.1)",
    security: PUBLIC,
    responses: { 200: { content: { "application/json": { schema: z.looseObject({}) } }, description: "The OpenAPI document" } },
  });
  registry.registerPath({
    method: "get",
    path: "/docs",
    tags: ["service"],
    summary: "The API description as a readable page",
    security: PUBLIC,
    responses: { 200: text("text/html", "HTML page") },
  });
  registry.registerPath({
    method: "get",
    path: "/",
    tags: ["service"],
    summary: "The dashboard: lines, states, scores, tables and the timeline",
    description: "With tokens set, the dashboard asks for one at /login and keeps a session cookie.",
    security: PUBLIC,
    responses: { 200: text("text/html", "HTML page"), 303: { description: "To /login when tokens exist and no session is open" } },
  });
}
