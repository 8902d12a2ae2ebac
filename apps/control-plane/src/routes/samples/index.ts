// /v1/samples: schema in, one service call (services/samples.ts), JSON out.
import { createRoute } from "@hono/zod-openapi";
import { IdParam, SampleCreateSchema, SampleDetailSchema, SampleListSchema, SamplePatchSchema, SampleSchema } from "@linewatch/contract";
import type { Services } from "../../services/index";
import { createRouter, errorResponses, json, jsonBody } from "../common";

const tags = ["samples"];

const create = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Add a golden sample",
  request: jsonBody(SampleCreateSchema),
  responses: { 201: json(SampleSchema, "The sample"), ...errorResponses },
});
const list = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List samples",
  responses: { 200: json(SampleListSchema, "All samples"), ...errorResponses },
});
const get = createRoute({
  method: "get",
  path: "/{id}",
  tags,
  summary: "Get a sample, with the checks its latest results could not evaluate",
  request: { params: IdParam },
  responses: { 200: json(SampleDetailSchema, "The sample"), ...errorResponses },
});
const patch = createRoute({
  method: "patch",
  path: "/{id}",
  tags,
  summary: "Change a sample",
  request: { params: IdParam, ...jsonBody(SamplePatchSchema) },
  responses: { 200: json(SampleSchema, "The changed sample"), ...errorResponses },
});
const remove = createRoute({
  method: "delete",
  path: "/{id}",
  tags,
  summary: "Delete a sample (its probe results go with it)",
  request: { params: IdParam },
  responses: { 204: { description: "Deleted" }, ...errorResponses },
});

export function sampleRoutes({ samples }: Pick<Services, "samples">) {
  return createRouter()
    .openapi(create, async (c) => {
      const sample = await samples.create(c.req.valid("json"));
      c.header("Location", `/v1/samples/${sample.id}`);
      return c.json(sample, 201);
    })
    .openapi(list, async (c) => c.json({ samples: await samples.list() }, 200))
    .openapi(get, async (c) => c.json(await samples.get(c.req.valid("param").id), 200))
    .openapi(patch, async (c) => c.json(await samples.update(c.req.valid("param").id, c.req.valid("json")), 200))
    .openapi(remove, async (c) => {
      await samples.remove(c.req.valid("param").id);
      return c.body(null, 204);
    });
}
