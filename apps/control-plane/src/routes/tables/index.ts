import { createRoute } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AuthEnv } from "../../auth";
import type { Engine } from "../../engine";
import { NotFoundError } from "../../errors";
import type { TableView } from "../../tables/publisher";
import { createRouter, errorResponses, json } from "../common";
import { TableListSchema, TableQuery, TableRouteParam, TableSchema } from "./schema";

const tags = ["tables"];

/** `If-None-Match: "42"` (or W/"42", or a list) → the versions it names. */
function matchedVersions(header: string | undefined): Set<string> {
  if (!header) return new Set();
  return new Set(header.split(",").map((t) => t.trim().replace(/^W\//, "").replace(/^"|"$/g, "")));
}

/** Router-facing tables (SPEC §3). Credentials go only to a router token (SPEC §7). */
export function tableRoutes(engine: Engine) {
  const app = createRouter();

  async function withCredentials(c: Context<AuthEnv>, view: TableView) {
    if (c.var.principal.role !== "router") return view;
    const snapshot = await engine.registry.get();
    return {
      ...view,
      lines: view.lines.map((l) => {
        const line = snapshot.lines.get(l.id);
        return { ...l, apiKey: line?.apiKey ?? null, headers: line?.headers ?? {} };
      }),
    };
  }

  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags,
      summary: "Every route's published table",
      responses: { 200: json(TableListSchema, "The tables"), ...errorResponses },
    }),
    async (c) => {
      const snapshot = await engine.registry.get();
      const views = engine.publisher.allViews().filter((v) => snapshot.routes.has(v.route));
      return c.json({ tables: await Promise.all(views.map((v) => withCredentials(c, v))) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/{route}",
      tags,
      summary: "A route's published table (ETag = version; If-None-Match → 304; ?waitSec long-poll)",
      request: { params: TableRouteParam, query: TableQuery },
      responses: { 200: json(TableSchema, "The table"), 304: { description: "Not modified" }, ...errorResponses },
    }),
    async (c) => {
      const { route } = c.req.valid("param");
      const { waitSec } = c.req.valid("query");
      const snapshot = await engine.registry.get();
      if (!snapshot.routes.has(route)) throw new NotFoundError(`route ${JSON.stringify(route)}`);
      let view = engine.publisher.view(route);
      if (!view) {
        await engine.publisher.recompute([route], { reason: "first request", probeIds: [] });
        view = engine.publisher.view(route);
        if (!view) throw new NotFoundError(`table of route ${JSON.stringify(route)}`);
      }
      const known = matchedVersions(c.req.header("if-none-match"));
      if (known.has(String(view.version)) && waitSec) {
        await engine.publisher.waitForChange(route, view.version, waitSec * 1000, c.req.raw.signal);
        view = engine.publisher.view(route) ?? view;
      }
      c.header("ETag", `"${view.version}"`);
      c.header("Cache-Control", "no-cache");
      if (known.has(String(view.version))) return c.body(null, 304);
      return c.json((await withCredentials(c, view)) as never, 200);
    },
  );

  return app;
}
