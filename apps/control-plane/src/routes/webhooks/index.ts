// /v1/webhooks (admin only, auth.ts): schema in, one service call (services/webhooks.ts), JSON out.
import { createRoute } from "@hono/zod-openapi";
import {
  IdParam,
  WebhookCreateSchema,
  WebhookListSchema,
  WebhookPatchSchema,
  WebhookSchema,
  WebhookTestResultSchema,
} from "@linewatch/contract";
import type { Services } from "../../services/index";
import { createRouter, errorResponses, json, jsonBody } from "../common";

const tags = ["webhooks"];

const create = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Register a webhook sink (docs/alerts.md#webhooks)",
  request: jsonBody(WebhookCreateSchema),
  responses: { 201: json(WebhookSchema, "The sink (never its secret)"), ...errorResponses },
});
const list = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List webhook sinks with their queues, dead letters and last errors",
  responses: { 200: json(WebhookListSchema, "All sinks"), ...errorResponses },
});
const get = createRoute({
  method: "get",
  path: "/{id}",
  tags,
  summary: "Get a webhook sink",
  request: { params: IdParam },
  responses: { 200: json(WebhookSchema, "The sink"), ...errorResponses },
});
const patch = createRoute({
  method: "patch",
  path: "/{id}",
  tags,
  summary: "Change a webhook sink (deliveries already queued keep their body)",
  request: { params: IdParam, ...jsonBody(WebhookPatchSchema) },
  responses: { 200: json(WebhookSchema, "The changed sink"), ...errorResponses },
});
const remove = createRoute({
  method: "delete",
  path: "/{id}",
  tags,
  summary: "Delete a webhook sink (its queued deliveries go with it)",
  request: { params: IdParam },
  responses: { 204: { description: "Deleted" }, ...errorResponses },
});
const test = createRoute({
  method: "post",
  path: "/{id}/test",
  tags,
  summary: "Send the sink a signed test event now (not queued, not retried)",
  request: { params: IdParam },
  responses: { 200: json(WebhookTestResultSchema, "How the receiver answered"), ...errorResponses },
});

export function webhookRoutes({ webhooks }: Pick<Services, "webhooks">) {
  return createRouter()
    .openapi(create, async (c) => {
      const sink = await webhooks.create(c.req.valid("json"));
      c.header("Location", `/v1/webhooks/${sink.id}`);
      return c.json(sink, 201);
    })
    .openapi(list, async (c) => c.json({ webhooks: await webhooks.list() }, 200))
    .openapi(get, async (c) => c.json(await webhooks.get(c.req.valid("param").id), 200))
    .openapi(patch, async (c) => c.json(await webhooks.update(c.req.valid("param").id, c.req.valid("json")), 200))
    .openapi(remove, async (c) => {
      await webhooks.remove(c.req.valid("param").id);
      return c.body(null, 204);
    })
    .openapi(test, async (c) => c.json(await webhooks.test(c.req.valid("param").id), 200));
}
