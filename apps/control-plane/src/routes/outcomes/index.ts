// POST /v1/outcomes: routers report live-traffic outcomes per line (docs/live-evidence.md; router tokens only, auth.ts).
import { createRoute } from "@hono/zod-openapi";
import { OutcomeAckSchema, OutcomeReportSchema } from "@linewatch/contract";
import type { Services } from "../../services/index";
import { createRouter, errorResponses, json } from "../common";

const report = createRoute({
  method: "post",
  path: "/",
  tags: ["outcomes"],
  summary: "Routers report live-traffic outcomes per line; idempotent per router and window",
  request: { body: { content: { "application/json": { schema: OutcomeReportSchema } }, required: true } },
  responses: { 200: json(OutcomeAckSchema, "Stored (or seen before)"), ...errorResponses },
});

export function outcomeRoutes({ outcomes }: Pick<Services, "outcomes">) {
  return createRouter().openapi(report, async (c) => c.json(await outcomes.receive(c.req.valid("json")), 200));
}
