// GET /v1/events: the query in, one service call (services/events.ts), JSON out.
import { createRoute } from "@hono/zod-openapi";
import { EventPageSchema, EventQuery } from "@linewatch/contract";
import type { Services } from "../../services/index";
import { createRouter, errorResponses, json } from "../common";

const page = createRoute({
  method: "get",
  path: "/",
  tags: ["events"],
  summary: "The timeline, newest first: state and weight changes, table publishes, trend alerts",
  request: { query: EventQuery },
  responses: { 200: json(EventPageSchema, "A page of events"), ...errorResponses },
});

export function eventRoutes({ events }: Pick<Services, "events">) {
  return createRouter().openapi(page, async (c) => c.json(await events.page(c.req.valid("query")), 200));
}
