// /v1/tables (docs/api.md): router-facing tables. Each version's answer is serialized once (publisher.ts
// ServedTable), so serving it is a lookup and a write; credentials go only to a router token (docs/roles.md).
import { createRoute } from "@hono/zod-openapi";
import { TableListSchema, TableQuery, TableRouteParam, TableSchema } from "@linewatch/contract";
import { requestHeader } from "../../auth";
import type { Services } from "../../services/index";
import { goneWith } from "../../tables/publisher";
import { validationErrorFrom } from "../../validation";
import { createRouter, errorResponses, json } from "../common";

const tags = ["tables"];

/** `?waitSec=N`, checked by TableQuery (a bad value is a 400 naming waitSec). */
export function readWaitSec(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const parsed = TableQuery.safeParse({ waitSec: raw });
  if (!parsed.success) throw validationErrorFrom(parsed.error, "query");
  return parsed.data.waitSec;
}

const list = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "Every route's published table",
  responses: { 200: json(TableListSchema, "The tables"), ...errorResponses },
});
const get = createRoute({
  method: "get",
  path: "/{route}",
  tags,
  summary: "A route's published table (ETag = version; If-None-Match → 304; ?waitSec long-poll)",
  request: { params: TableRouteParam, query: TableQuery },
  responses: { 200: json(TableSchema, "The table"), 304: { description: "Not modified" }, ...errorResponses },
});

export function tableRoutes({ tables }: Pick<Services, "tables">) {
  const app = createRouter();
  app.openapi(list, async (c) => c.json({ tables: await tables.list(c.var.principal.role === "router") }, 200));

  // Described like every route, but served without the generic validators: routers call it far more
  // often than anything else, and its only input to check is waitSec (checked by the same schema).
  app.openAPIRegistry.registerPath(get);
  app.get("/:route", async (c) => {
    const route = c.req.param("route");
    const waitSec = readWaitSec(c.req.query("waitSec"));
    const answer = await tables.answer(route, await tables.served(route), {
      router: c.var.principal.role === "router",
      ifNoneMatch: requestHeader(c, "if-none-match"),
      waitSec,
      gone: goneWith(c.req.raw.signal),
    });
    return answer.status === 304 ? c.body(null, 304, answer.headers) : c.body(answer.body, 200, answer.headers);
  });
  return app;
}
