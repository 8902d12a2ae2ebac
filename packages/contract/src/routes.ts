import { z } from "@hono/zod-openapi";
import { DEFAULT_ROUTE_SETTINGS, ON_ALL_DOWN } from "@linewatch/core";
import { NameSchema } from "./common";

const PolicySchema = z.record(z.string(), z.number()).openapi({
  description: "Overrides of the health policy thresholds for this route's lines (docs/health.md)",
  example: { cooldownBaseMs: 300000 },
});

export const RouteCreateSchema = z
  .strictObject({
    name: NameSchema.openapi({ example: "chat-default" }),
    freeShareCap: z
      .number()
      .min(0)
      .max(1)
      .default(DEFAULT_ROUTE_SETTINGS.freeShareCap)
      .openapi({ description: "Most of the traffic free lines may carry together" }),
    onAllDown: z.enum(ON_ALL_DOWN).default(DEFAULT_ROUTE_SETTINGS.onAllDown),
    policy: PolicySchema.optional(),
  })
  .openapi("RouteCreate");

export const RoutePatchSchema = z
  .strictObject({
    freeShareCap: z.number().min(0).max(1).optional(),
    onAllDown: z.enum(ON_ALL_DOWN).optional(),
    policy: PolicySchema.nullable().optional(),
  })
  .openapi("RoutePatch");

export const RouteSchema = z
  .object({
    name: z.string(),
    freeShareCap: z.number(),
    onAllDown: z.enum(ON_ALL_DOWN),
    policy: z.record(z.string(), z.unknown()).nullable(),
    lines: z.array(z.object({ id: z.string(), name: z.string(), tier: z.string(), weight: z.number().int(), adminState: z.string() })),
    warnings: z.array(z.string()).openapi({ description: "e.g. every line is free: a free line must never be the only exit" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Route");

export const RouteListSchema = z.object({ routes: z.array(RouteSchema) }).openapi("RouteList");

export const RouteNameParam = z.object({ name: z.string().openapi({ param: { name: "name", in: "path" } }) });
export const RouteDeleteQuery = z.object({
  cascade: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: "true: also remove the route from its lines and samples; otherwise a referenced route answers 409" }),
});

export type RouteCreate = z.infer<typeof RouteCreateSchema>;
/** What a client may send: the fields with defaults may be left out. */
export type RouteCreateInput = z.input<typeof RouteCreateSchema>;
export type RoutePatch = z.infer<typeof RoutePatchSchema>;
export type RouteResponse = z.infer<typeof RouteSchema>;
export type RouteList = z.infer<typeof RouteListSchema>;
