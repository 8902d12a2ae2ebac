import { z } from "@hono/zod-openapi";
import { ON_ALL_DOWN } from "@linewatch/core";
import { NameSchema } from "../common";

const PolicySchema = z.record(z.string(), z.number()).openapi({
  description: "Overrides of the health policy thresholds for this route's lines (SPEC §5)",
  example: { cooldownBaseMs: 300000 },
});

export const RouteCreateSchema = z
  .strictObject({
    name: NameSchema.openapi({ example: "chat-default" }),
    freeShareCap: z.number().min(0).max(1).default(0.2).openapi({ description: "Most of the traffic free lines may carry together" }),
    onAllDown: z.enum(ON_ALL_DOWN).default("fail-open"),
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
