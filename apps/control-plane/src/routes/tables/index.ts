import { createRoute } from "@hono/zod-openapi";
import { requestHeader } from "../../auth";
import type { Engine } from "../../engine";
import { NotFoundError } from "../../errors";
import type { ServedTable } from "../../tables/publisher";
import { validationErrorFrom } from "../../validation";
import { createRouter, errorResponses, json } from "../common";
import { TableListSchema, TableQuery, TableRouteParam, TableSchema } from "./schema";

const tags = ["tables"];

/** `?waitSec=N`, checked by TableQuery (a bad value is a 400 naming waitSec). */
function readWaitSec(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const parsed = TableQuery.safeParse({ waitSec: raw });
  if (!parsed.success) throw validationErrorFrom(parsed.error, "query");
  return parsed.data.waitSec;
}

/** Whether `If-None-Match` (`"42"`, W/"42", or a list) names this version. */
function namesVersion(header: string | undefined, served: ServedTable): boolean {
  if (!header) return false;
  if (header === served.etag) return true; // what routers send: the ETag they were given
  const version = String(served.table.version);
  return header.split(",").some((t) => t.trim().replace(/^W\//, "").replace(/^"|"$/g, "") === version);
}

/**
 * Router-facing tables (SPEC §3). Credentials go only to a router token (SPEC §7). Each version's
 * answer is serialized once (publisher.ts ServedTable), so serving it is a lookup and a write.
 */
export function tableRoutes(engine: Engine) {
  const app = createRouter();

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
      const router = c.var.principal.role === "router";
      const tables = engine.publisher
        .allViews()
        .filter((v) => snapshot.routes.has(v.route))
        .map((v) => (router ? engine.publisher.withCredentials(v, snapshot) : v));
      return c.json({ tables }, 200);
    },
  );

  const getTable = createRoute({
    method: "get",
    path: "/{route}",
    tags,
    summary: "A route's published table (ETag = version; If-None-Match → 304; ?waitSec long-poll)",
    request: { params: TableRouteParam, query: TableQuery },
    responses: { 200: json(TableSchema, "The table"), 304: { description: "Not modified" }, ...errorResponses },
  });
  // Described like every route, but served without the generic validators: routers call it far more
  // often than anything else, and its only input to check is waitSec (checked by the same schema).
  app.openAPIRegistry.registerPath(getTable);
  app.get("/:route", async (c) => {
    const route = c.req.param("route");
    const waitSec = readWaitSec(c.req.query("waitSec"));
    let snapshot = await engine.registry.get();
    if (!snapshot.routes.has(route)) throw new NotFoundError(`route ${JSON.stringify(route)}`);
    let served = engine.publisher.servedTable(route);
    if (!served) {
      await engine.publisher.recompute([route], { reason: "first request", probeIds: [] });
      served = engine.publisher.servedTable(route);
      if (!served) throw new NotFoundError(`table of route ${JSON.stringify(route)}`);
    }
    const ifNoneMatch = requestHeader(c, "if-none-match");
    if (waitSec && namesVersion(ifNoneMatch, served)) {
      await engine.publisher.waitForChange(route, served.table.version, waitSec * 1000, c.req.raw.signal);
      served = engine.publisher.servedTable(route) ?? served;
      snapshot = await engine.registry.get();
    }
    const headers = { etag: served.etag, "cache-control": "no-cache" };
    if (namesVersion(ifNoneMatch, served)) return c.body(null, 304, headers);
    const body = c.var.principal.role === "router" ? engine.publisher.credentialedBody(served, snapshot) : served.body;
    return c.body(body, 200, { ...headers, "content-type": "application/json" });
  });

  return app;
}
