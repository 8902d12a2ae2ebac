import { z } from "@hono/zod-openapi";

export const ReplayRequestSchema = z
  .strictObject({
    since: z
      .string()
      .max(20)
      .optional()
      .openapi({ description: 'A duration back from now (or from `to`): "24h", "90m", "2d". Default 24h.' }),
    from: z.string().max(40).optional().openapi({ description: "ISO time; the range is [from, to)" }),
    to: z.string().max(40).optional().openapi({ description: "ISO time; default now" }),
    lines: z.array(z.string().min(1).max(100)).max(2000).optional().openapi({ description: "Line names or ids; default every line" }),
    routes: z
      .array(z.string().min(1).max(100))
      .max(500)
      .optional()
      .openapi({ description: "Route names; their lines are replayed and reported" }),
    policy: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .openapi({
        description:
          "Proposed policy: the fields of a route's health-policy overrides (e.g. failCount, cooldownBaseMs), plus optional `weights` (component weights) and `passScore` to re-score stored components. Absent: the current policy.",
        example: { failCount: 3, cooldownBaseMs: 600000 },
      }),
    timeline: z
      .string()
      .max(100)
      .optional()
      .openapi({ description: "A line (name or id) whose state and weight changes the report lists, actual and proposed" }),
  })
  .openapi("ReplayRequest");

const Side = z.record(z.string(), z.unknown());

export const ReplayReportSchema = z
  .object({
    range: z.object({ from: z.string(), to: z.string() }),
    policy: z.record(z.string(), z.unknown()),
    results: z.number().int().openapi({ description: "Probe results replayed" }),
    notes: z
      .array(z.string())
      .openapi({ description: "What a replay cannot know, e.g. expectations are not re-checked (content is not stored)" }),
    lines: z.array(z.object({ id: z.string(), name: z.string(), actual: Side, proposed: Side })),
    routes: z.array(z.object({ name: z.string(), actual: Side, proposed: Side })),
    episodes: z
      .array(z.record(z.string(), z.unknown()))
      .openapi({ description: "Bad episodes: when each timeline took the line to weight 0, and the share it carried" }),
    badEpisodeShare: z.object({ actualShareMinutes: z.number(), proposedShareMinutes: z.number(), change: z.number() }),
    summary: z.record(z.string(), z.number()),
    timelines: z.array(z.record(z.string(), z.unknown())),
  })
  .openapi("ReplayReport");

export type ReplayRequest = z.infer<typeof ReplayRequestSchema>;
