import { z } from "@hono/zod-openapi";
import { type RouteTable, type RouteTableLine, type RouteTableList, TABLE_MODES, TOTAL_WEIGHT } from "@linewatch/core";

// The wire type is core's RouteTable (declared once); these schemas describe it for validation and
// /openapi.json, and test/packages/router-client/table-wire.test.ts checks they say the same.

export const TableLineSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    tier: z.string(),
    state: z.string(),
    weight: z
      .number()
      .int()
      .min(0)
      .max(TOTAL_WEIGHT)
      .openapi({ description: "Integer; the weights of each protocol's lines sum to 10000 (0 if lines is empty)" }),
    protocol: z.string(),
    baseUrl: z.string(),
    model: z.string(),
    apiKey: z.string().nullable().optional().openapi({ description: "Only for a router token" }),
    headers: z.record(z.string(), z.string()).optional().openapi({ description: "Only for a router token" }),
  })
  .openapi("TableLine") satisfies z.ZodType<RouteTableLine>;

export const TableSchema = z
  .object({
    route: z.string().min(1),
    version: z.number().int(),
    generatedAt: z.string(),
    mode: z.enum(TABLE_MODES).openapi({ description: "degraded: no paid line usable (free cap lifted); panic: no line usable" }),
    lines: z.array(TableLineSchema),
  })
  .openapi("Table") satisfies z.ZodType<RouteTable>;

export const TableListSchema = z.object({ tables: z.array(TableSchema) }).openapi("TableList") satisfies z.ZodType<RouteTableList>;

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

/** The wire types as the schemas say (equal to core's RouteTable, RouteTableLine and RouteTableList). */
export type TableResponse = z.infer<typeof TableSchema>;
export type TableLineResponse = z.infer<typeof TableLineSchema>;
export type TableListResponse = z.infer<typeof TableListSchema>;
