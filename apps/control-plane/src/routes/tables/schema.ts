import { z } from "@hono/zod-openapi";

export const TableLineSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    tier: z.string(),
    state: z.string(),
    weight: z.number().int().openapi({ description: "Integer; a table's weights sum to 10000 (0 if lines is empty)" }),
    protocol: z.string(),
    baseUrl: z.string(),
    model: z.string(),
    apiKey: z.string().nullable().optional().openapi({ description: "Only for a router token" }),
    headers: z.record(z.string(), z.string()).optional().openapi({ description: "Only for a router token" }),
  })
  .openapi("TableLine");

export const TableSchema = z
  .object({
    route: z.string(),
    version: z.number().int(),
    generatedAt: z.string(),
    mode: z
      .enum(["normal", "degraded", "panic"])
      .openapi({ description: "degraded: no paid line usable (free cap lifted); panic: no line usable" }),
    lines: z.array(TableLineSchema),
  })
  .openapi("Table");

export const TableListSchema = z.object({ tables: z.array(TableSchema) }).openapi("TableList");

export const TableQuery = z.object({
  waitSec: z.coerce
    .number()
    .int()
    .min(0)
    .max(60)
    .optional()
    .openapi({ description: "With If-None-Match: hold the request until the version changes or this many seconds pass (then 304)" }),
});

export const TableRouteParam = z.object({ route: z.string().openapi({ param: { name: "route", in: "path" } }) });

export type Table = z.infer<typeof TableSchema>;
