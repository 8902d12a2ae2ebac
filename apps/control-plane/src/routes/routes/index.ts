import { createRoute } from "@hono/zod-openapi";
import { type AdminState, DEFAULT_HEALTH_POLICY, resolveHealthPolicy, routeWarnings, type Tier } from "@linewatch/core";
import {
  deleteRoute,
  getRouteRow,
  insertRoute,
  isUniqueViolation,
  listRouteRows,
  type RouteRow,
  routeMembers,
  routeReferences,
  updateRoute,
} from "@linewatch/db";
import type { AppDeps } from "../../deps";
import { ConflictError, NotFoundError, ValidationError } from "../../errors";
import { createRouter, errorResponses, json, jsonBody } from "../common";
import { RouteCreateSchema, RouteDeleteQuery, RouteListSchema, RouteNameParam, RoutePatchSchema, RouteSchema } from "./schema";

const tags = ["routes"];

export interface RouteHooks {
  routeChanged(route: string): Promise<void>;
}

export function routeRoutes(deps: AppDeps, hooks: RouteHooks) {
  const app = createRouter();
  const db = deps.database.db;

  /** A policy override must name known thresholds with usable values; the route's own freeShareCap is a field. */
  function checkPolicy(policy: Record<string, number> | null | undefined) {
    if (!policy) return;
    const known = new Set(Object.keys(DEFAULT_HEALTH_POLICY).filter((k) => k !== "freeShareCap" && k !== "probationSteps"));
    const unknown = Object.keys(policy).filter((k) => !known.has(k));
    if (unknown.length > 0) {
      throw new ValidationError(
        `policy.${unknown[0]}: unknown threshold (known: ${[...known].join(", ")})`,
        unknown.map((k) => ({ field: `policy.${k}`, message: "unknown threshold" })),
      );
    }
    const resolved = resolveHealthPolicy(policy);
    if (!resolved.ok) {
      const details = resolved.error.map((p) => ({ field: `policy.${p.split(":")[0]}`, message: p.split(":").slice(1).join(":").trim() }));
      throw new ValidationError(`${details[0]?.field}: ${details[0]?.message}`, details);
    }
  }

  async function describe(row: RouteRow) {
    const members = await routeMembers(db, row.name);
    return {
      name: row.name,
      freeShareCap: row.freeShareCap,
      onAllDown: row.onAllDown as "fail-open" | "fail-closed",
      policy: row.policy ?? null,
      lines: members.map(({ maxShare: _m, protocol: _p, ...m }) => m),
      warnings: routeWarnings(
        members.map((m) => ({ tier: m.tier as Tier, maxShare: m.maxShare, adminState: m.adminState as AdminState, protocol: m.protocol })),
        { freeShareCap: row.freeShareCap },
      ).map((w) => w.message),
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }

  app.openapi(
    createRoute({
      method: "post",
      path: "/",
      tags,
      summary: "Create a route",
      request: jsonBody(RouteCreateSchema),
      responses: { 201: json(RouteSchema, "The route"), ...errorResponses },
    }),
    async (c) => {
      const body = c.req.valid("json");
      checkPolicy(body.policy);
      const row = await insertRoute(db, { ...body, policy: body.policy ?? null }).catch((e: unknown) => {
        throw isUniqueViolation(e)
          ? new ConflictError(`a route named ${JSON.stringify(body.name)} already exists`, [{ field: "name", message: "already exists" }])
          : e;
      });
      await hooks.routeChanged(row.name);
      c.header("Location", `/v1/routes/${encodeURIComponent(row.name)}`);
      return c.json(await describe(row), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags,
      summary: "List routes",
      responses: { 200: json(RouteListSchema, "All routes"), ...errorResponses },
    }),
    async (c) => {
      const rows = await listRouteRows(db);
      return c.json({ routes: await Promise.all(rows.map(describe)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/{name}",
      tags,
      summary: "Get a route, its lines and warnings",
      request: { params: RouteNameParam },
      responses: { 200: json(RouteSchema, "The route"), ...errorResponses },
    }),
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
      checkPolicy(body.policy);
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
          throw new ConflictError(
            `route ${JSON.stringify(name)} is still used; remove it from its lines and samples or pass ?cascade=true`,
            [...refs.lines.map((l) => ({ field: "lines", message: l })), ...refs.samples.map((s) => ({ field: "samples", message: s }))],
          );
        }
      }
      if (!(await deleteRoute(db, name, cascade))) throw new NotFoundError(`route ${JSON.stringify(name)}`);
      await hooks.routeChanged(name);
      return c.body(null, 204);
    },
  );

  return app;
}
