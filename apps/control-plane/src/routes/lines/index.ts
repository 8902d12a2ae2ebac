// /v1/lines: schema in, one service call (services/lines.ts), JSON out.
import { createRoute } from "@hono/zod-openapi";
import { IdParam, LineCreateSchema, LineListSchema, LinePatchSchema, LineSchema } from "@linewatch/contract";
import type { Services } from "../../services/index";
import { createRouter, errorResponses, json, jsonBody } from "../common";

const tags = ["lines"];

const create = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Register a line",
  request: jsonBody(LineCreateSchema),
  responses: { 201: json(LineSchema, "The line"), ...errorResponses },
});
const list = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List lines",
  responses: { 200: json(LineListSchema, "All lines"), ...errorResponses },
});
const get = createRoute({
  method: "get",
  path: "/{id}",
  tags,
  summary: "Get a line",
  request: { params: IdParam },
  responses: { 200: json(LineSchema, "The line"), ...errorResponses },
});
const patch = createRoute({
  method: "patch",
  path: "/{id}",
  tags,
  summary: "Change a line (including adminState: drain, disable, re-enable)",
  request: { params: IdParam, ...jsonBody(LinePatchSchema) },
  responses: { 200: json(LineSchema, "The changed line"), ...errorResponses },
});
const remove = createRoute({
  method: "delete",
  path: "/{id}",
  tags,
  summary: "Delete a line (its memberships, health and probe results go with it; events stay)",
  request: { params: IdParam },
  responses: { 204: { description: "Deleted" }, ...errorResponses },
});

export function lineRoutes({ lines }: Pick<Services, "lines">) {
  return createRouter()
    .openapi(create, async (c) => {
      const line = await lines.create(c.req.valid("json"));
      c.header("Location", `/v1/lines/${line.id}`);
      return c.json(line, 201);
    })
    .openapi(list, async (c) => c.json({ lines: await lines.list() }, 200))
    .openapi(get, async (c) => c.json(await lines.get(c.req.valid("param").id), 200))
    .openapi(patch, async (c) => c.json(await lines.update(c.req.valid("param").id, c.req.valid("json")), 200))
    .openapi(remove, async (c) => {
      await lines.remove(c.req.valid("param").id);
      return c.body(null, 204);
    });
}
