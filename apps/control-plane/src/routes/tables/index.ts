import { createRoute } from "@hono/zod-openapi";
import { TableListSchema, TableQuery, TableRouteParam, TableSchema } from "@linewatch/contract";
import { requestHeader } from "../../auth";
import type { Engine } from "../../engine";
import { NotFoundError } from "../../errors";
import { validationErrorFrom } from "../../validation";
import { createRouter, errorResponses, json } from "../common";
import { tableAnswer } from "./answer";

const tags = ["tables"];

/** `?waitSec=N`, checked by TableQuery (a bad value is a 400 naming waitSec). */
export function readWaitSec(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const parsed = TableQuery.safeParse({ waitSec: raw });
  if (!parsed.success) throw validationErrorFrom(parsed.error, "query");
  return parsed.data.waitSec;
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
    const snapshot = await engine.registry.get();
    if (!snapshot.routes.has(route)) throw new NotFoundError(`route ${JSON.stringify(route)}`);
    let served = engine.publisher.servedTable(route);
    if (!served) {
      await engine.publisher.recompute([route], { reason: "first request", probeIds: [] });
      served = engine.publisher.servedTable(route);
      if (!served) throw new NotFoundError(`table of route ${JSON.stringify(route)}`);
    }
    const answer = await tableAnswer(
      engine,
      route,
      { served, snapshot },
      {
        router: c.var.principal.role === "router",
        ifNoneMatch: requestHeader(c, "if-none-match"),
        waitSec,
        signal: c.req.raw.signal,
      },
    );
    return answer.status === 304 ? c.body(null, 304, answer.headers) : c.body(answer.body, 200, answer.headers);
  });

  return app;
}
