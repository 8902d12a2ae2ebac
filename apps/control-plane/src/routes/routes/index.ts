// /v1/routes: schema in, one service call (services/routes.ts), JSON out.
import { createRoute } from "@hono/zod-openapi";
import { RouteCreateSchema, RouteDeleteQuery, RouteListSchema, RouteNameParam, RoutePatchSchema, RouteSchema } from "@linewatch/contract";
import type { Services } from "../../services/index";
import { createRouter, errorResponses, json, jsonBody } from "../common";

const tags = ["routes"];

const create = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Create a route",
  request: jsonBody(RouteCreateSchema),
  responses: { 201: json(RouteSchema, "The route"), ...errorResponses },
});
const list = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List routes",
  responses: { 200: json(RouteListSchema, "All routes"), ...errorResponses },
});
const get = createRoute({
  method: "get",
  path: "/{name}",
  tags,
  summary: "Get a route, its lines and warnings",
  request: { params: RouteNameParam },
  responses: { 200: json(RouteSchema, "The route"), ...errorResponses },
});
const patch = createRoute({
  method: "patch",
  path: "/{name}",
  tags,
  summary: "Change a route",
  request: { params: RouteNameParam, ...jsonBody(RoutePatchSchema) },
  responses: { 200: json(RouteSchema, "The changed route"), ...errorResponses },
});
const remove = createRoute({
  method: "delete",
  path: "/{name}",
  tags,
  summary: "Delete a route (409 while lines or samples refer to it, unless ?cascade=true)",
  request: { params: RouteNameParam, query: RouteDeleteQuery },
  responses: { 204: { description: "Deleted" }, ...errorResponses },
});

export function routeRoutes({ routes }: Pick<Services, "routes">) {
  return createRouter()
    .openapi(create, async (c) => {
      const route = await routes.create(c.req.valid("json"));
      c.header("Location", `/v1/routes/${encodeURIComponent(route.name)}`);
      return c.json(route, 201);
    })
    .openapi(list, async (c) => c.json({ routes: await routes.list() }, 200))
    .openapi(get, async (c) => c.json(await routes.get(c.req.valid("param").name), 200))
    .openapi(patch, async (c) => c.json(await routes.update(c.req.valid("param").name, c.req.valid("json")), 200))
    .openapi(remove, async (c) => {
      await routes.remove(c.req.valid("param").name, c.req.valid("query").cascade === "true");
      return c.body(null, 204);
    });
}
