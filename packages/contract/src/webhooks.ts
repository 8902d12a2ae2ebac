// Webhook sinks (docs/alerts.md#webhooks): admin only. The kinds and formats are core's lists, so a
// kind added there is one a sink may ask for.
import { z } from "@hono/zod-openapi";
import { WEBHOOK_EVENT_KINDS, WEBHOOK_FORMATS } from "@linewatch/core";
import { NameSchema } from "./common";

const WebhookUrl = z
  .string()
  .max(2048)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === "http:" || u.protocol === "https:";
    } catch {
      return false;
    }
  }, "must be an http(s) URL")
  .openapi({
    description: "Where events are POSTed; refused if it names a cloud metadata or link-local address",
    example: "https://hooks.example.com/linewatch",
  });

const fields = {
  name: NameSchema.openapi({ example: "oncall" }),
  url: WebhookUrl,
  events: z
    .array(z.enum(WEBHOOK_EVENT_KINDS))
    .min(1)
    .refine((k) => new Set(k).size === k.length, "a kind may appear only once")
    .openapi({ description: `The event kinds sent: ${WEBHOOK_EVENT_KINDS.join(", ")}` }),
  routes: z
    .array(NameSchema)
    .max(100)
    .refine((r) => new Set(r).size === r.length, "a route may appear only once")
    .openapi({ description: "Only events of these routes (a line's: the routes it is on); empty: every route" }),
  format: z.enum(WEBHOOK_FORMATS).openapi({ description: "json: the generic body; slack: a Slack incoming-webhook body ({text})" }),
  secret: z
    .string()
    .min(16)
    .max(512)
    .openapi({ description: "HMAC-SHA256 signing key (its UTF-8 bytes); stored encrypted, never returned" }),
};

export const WebhookCreateSchema = z
  .strictObject({
    name: fields.name,
    url: fields.url,
    events: fields.events.default([...WEBHOOK_EVENT_KINDS]).openapi({ description: "Default: every kind" }),
    routes: fields.routes.default([]),
    format: fields.format.default("json"),
    secret: fields.secret,
  })
  .openapi("WebhookCreate");

export const WebhookPatchSchema = z
  .strictObject({
    name: fields.name.optional(),
    url: fields.url.optional(),
    events: fields.events.optional(),
    routes: fields.routes.optional(),
    format: fields.format.optional(),
    secret: fields.secret.optional().openapi({ description: "A new signing key (rotation)" }),
  })
  .openapi("WebhookPatch");

export const WebhookDeliveryStatsSchema = z
  .object({
    pending: z.number().int().openapi({ description: "Deliveries not yet delivered nor given up (the sink's queue)" }),
    oldestPendingAt: z.string().nullable().openapi({ description: "When the oldest undelivered event happened" }),
    delivered: z.number().int(),
    failedAttempts: z.number().int().openapi({ description: "Attempts that failed and were retried" }),
    deadLetters: z.number().int().openapi({ description: "Deliveries given up after the retry window" }),
    lastDeliveredAt: z.string().nullable(),
    lastError: z.object({ at: z.string(), message: z.string() }).nullable(),
  })
  .openapi("WebhookDeliveryStats");

export const WebhookSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENT_KINDS)),
    routes: z.array(z.string()),
    format: z.enum(WEBHOOK_FORMATS),
    hasSecret: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
    delivery: WebhookDeliveryStatsSchema,
  })
  .openapi("Webhook");

export const WebhookListSchema = z.object({ webhooks: z.array(WebhookSchema) }).openapi("WebhookList");

export const WebhookTestResultSchema = z
  .object({
    ok: z.boolean().openapi({ description: "The receiver answered 2xx" }),
    status: z.number().int().nullable(),
    latencyMs: z.number(),
    error: z.string().nullable(),
  })
  .openapi("WebhookTestResult");

/** The generic JSON body a sink of format `json` is POSTed (core webhookJsonBody builds it). */
export const WebhookBodySchema = z
  .object({
    id: z.string().openapi({ description: "Idempotency key: the same on every attempt of this event to this sink" }),
    kinds: z
      .array(z.enum(WEBHOOK_EVENT_KINDS))
      .openapi({ description: "The webhook kinds the event belongs to, narrowest first (empty: a test delivery)" }),
    summary: z.string(),
    line: z.string().nullable(),
    routes: z.array(z.string()),
    event: z.object({
      id: z.number().int(),
      at: z.string(),
      kind: z.string(),
      lineId: z.string().nullable(),
      route: z.string().nullable(),
      reason: z.string(),
      data: z.record(z.string(), z.unknown()),
    }),
  })
  .openapi("WebhookBody");

export type WebhookCreate = z.infer<typeof WebhookCreateSchema>;
export type WebhookPatch = z.infer<typeof WebhookPatchSchema>;
export type WebhookResponse = z.infer<typeof WebhookSchema>;
export type WebhookList = z.infer<typeof WebhookListSchema>;
export type WebhookTestResult = z.infer<typeof WebhookTestResultSchema>;
export type WebhookBody = z.infer<typeof WebhookBodySchema>;
