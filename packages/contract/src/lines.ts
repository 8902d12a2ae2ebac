import { z } from "@hono/zod-openapi";
import { ADMIN_STATES, PROTOCOLS, TIERS } from "@linewatch/core";
import { NameSchema } from "./common";

const HttpUrl = z
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
  .openapi({ example: "https://api.openai.com/v1" });

const HeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "not a valid header name");

export const RouteMembershipSchema = z
  .strictObject({
    route: NameSchema.openapi({ example: "chat-default" }),
    weight: z.number().int().min(0).max(1_000_000).openapi({ description: "Base weight within the route", example: 100 }),
  })
  .openapi("RouteMembership");

const Memberships = z
  .array(RouteMembershipSchema)
  .max(100)
  .refine((m) => new Set(m.map((x) => x.route)).size === m.length, "a route may appear only once");

const fields = {
  name: NameSchema.openapi({ example: "paid-a" }),
  tier: z.enum(TIERS),
  protocol: z.enum(PROTOCOLS),
  baseUrl: HttpUrl,
  model: z.string().min(1).max(200).openapi({ example: "gpt-4o-mini" }),
  apiKey: z.string().min(1).max(4096).openapi({ description: "Stored encrypted; never returned" }),
  headers: z
    .record(HeaderName, z.string().max(4096))
    .refine((h) => Object.keys(h).length <= 50, "at most 50 headers")
    .openapi({ description: "Extra headers sent to the upstream (e.g. x-api-key, api-key); values stored encrypted, never returned" }),
  routes: Memberships,
  probeIntervalSec: z.number().int().min(1).max(86_400),
  timeoutMs: z.number().int().min(100).max(600_000),
  dailyQuota: z.number().int().min(1).max(1_000_000_000),
  probeBudgetPct: z.number().gt(0).max(100),
  maxShare: z.number().min(0).max(1),
  adminState: z.enum(ADMIN_STATES),
};

export const LineCreateSchema = z
  .strictObject({
    name: fields.name,
    tier: fields.tier,
    protocol: fields.protocol,
    baseUrl: fields.baseUrl,
    model: fields.model,
    apiKey: fields.apiKey.optional(),
    headers: fields.headers.optional(),
    routes: fields.routes.default([]),
    probeIntervalSec: fields.probeIntervalSec.default(45),
    timeoutMs: fields.timeoutMs.optional().openapi({ description: "Default: the sample's timeout, else 10000" }),
    dailyQuota: fields.dailyQuota.optional().openapi({ description: "Requests/day the upstream allows" }),
    probeBudgetPct: fields.probeBudgetPct.default(5).openapi({ description: "Share of dailyQuota probes may spend" }),
    maxShare: fields.maxShare.optional(),
    adminState: fields.adminState.default("active"),
  })
  .openapi("LineCreate");

export const LinePatchSchema = z
  .strictObject({
    name: fields.name.optional(),
    tier: fields.tier.optional(),
    protocol: fields.protocol.optional(),
    baseUrl: fields.baseUrl.optional(),
    model: fields.model.optional(),
    apiKey: fields.apiKey.nullable().optional().openapi({ description: "null removes the key" }),
    headers: fields.headers.optional(),
    routes: fields.routes.optional().openapi({ description: "Replaces the line's memberships" }),
    probeIntervalSec: fields.probeIntervalSec.optional(),
    timeoutMs: fields.timeoutMs.nullable().optional(),
    dailyQuota: fields.dailyQuota.nullable().optional(),
    probeBudgetPct: fields.probeBudgetPct.optional(),
    maxShare: fields.maxShare.nullable().optional(),
    adminState: fields.adminState.optional().openapi({ description: "drain, disable or re-enable the line" }),
  })
  .openapi("LinePatch");

export const LineSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    tier: fields.tier,
    protocol: fields.protocol,
    baseUrl: z.string(),
    model: z.string(),
    headers: z
      .record(z.string(), z.object({ hasValue: z.boolean() }))
      .openapi({ description: "Header names; the values are secrets and never come back", example: { "x-api-key": { hasValue: true } } }),
    routes: z.array(RouteMembershipSchema),
    probeIntervalSec: z.number().int(),
    timeoutMs: z.number().int().nullable(),
    dailyQuota: z.number().int().nullable(),
    probeBudgetPct: z.number(),
    maxShare: z.number().nullable(),
    adminState: fields.adminState,
    hasApiKey: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Line");

export const LineListSchema = z.object({ lines: z.array(LineSchema) }).openapi("LineList");

export type LineCreate = z.infer<typeof LineCreateSchema>;
export type LinePatch = z.infer<typeof LinePatchSchema>;
export type LineResponse = z.infer<typeof LineSchema>;
export type LineList = z.infer<typeof LineListSchema>;
