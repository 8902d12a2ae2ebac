import { createRoute } from "@hono/zod-openapi";
import {
  IdParam,
  isUuid,
  SampleCreateSchema,
  SampleDetailSchema,
  SampleListSchema,
  SamplePatchSchema,
  SampleSchema,
} from "@linewatch/contract";
import type { SampleExpect } from "@linewatch/core";
import {
  brokenChecksOf,
  deleteSample,
  getRouteRow,
  getSample,
  insertSample,
  isUniqueViolation,
  listSamples,
  type SampleWrite,
  updateSample,
} from "@linewatch/db";
import type { AppDeps } from "../../deps";
import { ConflictError, NotFoundError } from "../../errors";
import { createRouter, errorResponses, json, jsonBody } from "../common";

const tags = ["samples"];

export function sampleRoutes(deps: AppDeps) {
  const app = createRouter();
  const db = deps.database.db;

  async function checkRoutes(routes: string[] | undefined) {
    for (const [i, name] of (routes ?? []).entries()) {
      if (!(await getRouteRow(db, name))) throw NotFoundError.reference(`routes.${i}`, `route ${JSON.stringify(name)}`);
    }
  }
  const duplicateName = (name: string | undefined) =>
    new ConflictError(`a sample named ${JSON.stringify(name)} already exists`, [{ field: "name", message: "already exists" }]);
  const asResponse = <T extends { source: string }>(s: T) => ({ ...s, source: s.source as "api" | "shipped" });

  app.openapi(
    createRoute({
      method: "post",
      path: "/",
      tags,
      summary: "Add a golden sample",
      request: jsonBody(SampleCreateSchema),
      responses: { 201: json(SampleSchema, "The sample"), ...errorResponses },
    }),
    async (c) => {
      const body = c.req.valid("json");
      await checkRoutes(body.routes);
      const write: SampleWrite = { ...body, expect: body.expect as SampleExpect, timeoutMs: body.timeoutMs ?? null };
      const sample = await insertSample(db, write).catch((e: unknown) => {
        throw isUniqueViolation(e) ? duplicateName(body.name) : e;
      });
      c.header("Location", `/v1/samples/${sample.id}`);
      return c.json(asResponse(sample), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags,
      summary: "List samples",
      responses: { 200: json(SampleListSchema, "All samples"), ...errorResponses },
    }),
    async (c) => c.json({ samples: (await listSamples(db)).map(asResponse) }, 200),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/{id}",
      tags,
      summary: "Get a sample, with the checks its latest results could not evaluate",
      request: { params: IdParam },
      responses: { 200: json(SampleDetailSchema, "The sample"), ...errorResponses },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const sample = isUuid(id) ? await getSample(db, id) : null;
      if (!sample) throw new NotFoundError(`sample ${id}`);
      const broken = (await brokenChecksOf(db, id)).map((b) => ({
        check: b.name,
        detail: b.detail,
        lines: b.lines,
        lastSeenAt: new Date(b.lastSeenAt).toISOString(),
      }));
      return c.json({ ...asResponse(sample), broken }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/{id}",
      tags,
      summary: "Change a sample",
      request: { params: IdParam, ...jsonBody(SamplePatchSchema) },
      responses: { 200: json(SampleSchema, "The changed sample"), ...errorResponses },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const body = c.req.valid("json");
      if (!isUuid(id) || !(await getSample(db, id))) throw new NotFoundError(`sample ${id}`);
      await checkRoutes(body.routes);
      const { expect, ...rest } = body;
      const patch: Partial<SampleWrite> = { ...rest } as Partial<SampleWrite>;
      if (expect) patch.expect = expect as SampleExpect;
      const sample = await updateSample(db, id, patch, new Date(deps.clock.now())).catch((e: unknown) => {
        throw isUniqueViolation(e) ? duplicateName(body.name) : e;
      });
      if (!sample) throw new NotFoundError(`sample ${id}`);
      return c.json(asResponse(sample), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/{id}",
      tags,
      summary: "Delete a sample (its probe results go with it)",
      request: { params: IdParam },
      responses: { 204: { description: "Deleted" }, ...errorResponses },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      if (!isUuid(id) || !(await deleteSample(db, id))) throw new NotFoundError(`sample ${id}`);
      return c.body(null, 204);
    },
  );

  return app;
}
