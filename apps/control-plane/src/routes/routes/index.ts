import { createRoute } from "@hono/zod-openapi";
import { type RouteRow, deleteRoute, getRouteRow, insertRoute, isUniqueViolation, listRouteRows, routeMembers, routeReferences, updateRoute } from "@linewatch/db";
import type { AppDeps } from "../../deps";
import { ConflictError, NotFoundError } from "../../errors";
import { createRouter, errorResponses, json, jsonBody } from "../common";
import { RouteCreateSchema, RouteDeleteQuery, RouteListSchema, RouteNameParam, RoutePatchSchema, RouteSchema } from "./schema";

const tags = ["routes"];

export interface RouteHooks {
  routeChanged(route: string): Promise<void>;
  /** Warnings an operator should see for this route (e.g. only free lines). */
  warnings(route: string, members: { tier: string; adminState: string }[]): string[];
}

export function routeRoutes(deps: AppDeps, hooks: RouteHooks) {
  const app = createRouter();
  const db = deps.database.db;

  async function describe(row: RouteRow) {
    const members = await routeMembers(db, row.name);
    return {
      name: row.name,
      freeShareCap: row.freeShareCap,
      onAllDown: row.onAllDown as "fail-open" | "fail-closed",
      policy: row.policy ?? null,
      lines: members,
      warnings: hooks.warnings(row.name, members),
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }

  app.openapi(
    createRoute({ method: "post", path: "/", tags, summary: "Create a route", request: jsonBody(RouteCreateSchema), responses: { 201: json(RouteSchema, "The route"), ...errorResponses } }),
    async (c) => {
      const body = c.req.valid("json");
      const row = await insertRoute(db, { ...body, policy: body.policy ?? null }).catch((e: unknown) => {
        throw isUniqueViolation(e) ? new ConflictError(`a route named ${JSON.stringify(body.name)} already exists`, [{ field: "name", message: "already exists" }]) : e;
      });
      await hooks.routeChanged(row.name);
      c.header("Location", `/v1/routes/${encodeURIComponent(row.name)}`);
      return c.json(await describe(row), 201);
    },
  );

  app.openapi(
    createRoute({ method: "get", path: "/", tags, summary: "List routes", responses: { 200: json(RouteListSchema, "All routes"), ...errorResponses } }),
    async (c) => {
      const rows = await listRouteRows(db);
      return c.json({ routes: await Promise.all(rows.map(describe)) }, 200);
    },
  );

  app.openapi(
    createRoute({ method: "get", path: "/{name}", tags, summary: "Get a route, its lines and warnings", request: { params: RouteNameParam }, responses: { 200: json(RouteSchema, "The route"), ...errorResponses } }),
    async (c) => {
      const { name } = c.req.valid("param");
      const row = await getRouteRow(db, name);
      if (!row) throw new NotFoundError(`route ${JSON.stringify(name)}`);
      return c.json(await describe(row), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/{name}",
      tags,
      summary: "Change a route",
      request: { params: RouteNameParam, ...jsonBody(RoutePatchSchema) },
      responses: { 200: json(RouteSchema, "The changed route"), ...errorResponses },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const body = c.req.valid("json");
      const row = await updateRoute(db, name, body, new Date(deps.clock.now()));
      if (!row) throw new NotFoundError(`route ${JSON.stringify(name)}`);
      await hooks.routeChanged(name);
      return c.json(await describe(row), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/{name}",
      tags,
      summary: "Delete a route (409 while lines or samples refer to it, unless ?cascade=true)",
      request: { params: RouteNameParam, query: RouteDeleteQuery },
      responses: { 204: { description: "Deleted" }, ...errorResponses },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const cascade = c.req.valid("query").cascade === "true";
      if (!(await getRouteRow(db, name))) throw new NotFoundError(`route ${JSON.stringify(name)}`);
      if (!cascade) {
        const refs = await routeReferences(db, name);
        if (refs.lines.length + refs.samples.length > 0) {
          throw new ConflictError(`route ${JSON.stringify(name)} is still used; remove it from its lines and samples or pass ?cascade=true`, [
            ...refs.lines.map((l) => ({ field: "lines", message: l })),
            ...refs.samples.map((s) => ({ field: "samples", message: s })),
          ]);
        }
      }
      if (!(await deleteRoute(db, name, cascade))) throw new NotFoundError(`route ${JSON.stringify(name)}`);
      await hooks.routeChanged(name);
      return c.body(null, 204);
    },
  );

  return app;
}
