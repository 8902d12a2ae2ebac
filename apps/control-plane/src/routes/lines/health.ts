// POST /v1/lines/:id/probe and GET /v1/lines/:id/health: schema in, one service call, JSON out.
import { createRoute } from "@hono/zod-openapi";
import { ErrorSchema, IdParam, LineHealthSchema, ProbeRunSchema } from "@linewatch/contract";
import type { Services } from "../../services/index";
import { createRouter, errorResponses, json } from "../common";

const tags = ["lines"];

const probe = createRoute({
  method: "post",
  path: "/{id}/probe",
  tags,
  summary: "Probe the line now with every sample that applies; returns the results",
  request: { params: IdParam },
  responses: {
    200: json(ProbeRunSchema, "The probe results"),
    ...errorResponses,
    503: { content: { "application/json": { schema: ErrorSchema } }, description: "Probed, but the results could not be stored" },
  },
});
const health = createRoute({
  method: "get",
  path: "/{id}/health",
  tags,
  summary: "State, score, components, weight factor, cooldown, probing cost and recent probe results",
  request: { params: IdParam },
  responses: { 200: json(LineHealthSchema, "The line's health"), ...errorResponses },
});

export function lineHealthRoutes({ lines, views }: Pick<Services, "lines" | "views">) {
  return createRouter()
    .openapi(probe, async (c) => {
      const { results } = await lines.probe(c.req.valid("param").id);
      return c.json({ results }, 200);
    })
    .openapi(health, async (c) => c.json(await views.health(c.req.valid("param").id), 200));
}
