import { z } from "@hono/zod-openapi";
import { LIVE_OUTCOMES, type LiveOutcome } from "@linewatch/core";

/** Per window and line: a router would need 10 000 answers a second for a minute to reach it. */
export const MAX_OUTCOME_COUNT = 1_000_000;
export const MAX_REPORT_LINES = 1000;
/** A window may end at most this far in the future of the control plane's clock (skew)… */
export const MAX_WINDOW_FUTURE_MS = 5 * 60_000;
/** …or this far in its past (a router's backlog after an outage). */
export const MAX_WINDOW_AGE_MS = 24 * 3_600_000;

const count = z.number().int().min(0).max(MAX_OUTCOME_COUNT);
const total = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const CountsSchema = z.strictObject(Object.fromEntries(LIVE_OUTCOMES.map((o) => [o, count])) as Record<LiveOutcome, typeof count>);

export const OutcomeReportSchema = z
  .strictObject({
    routerId: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, "letters, digits and . _ : - only")
      .openapi({ description: "Stable per router process; with windowId the idempotency key" }),
    windowId: z.string().min(1).max(128).openapi({ description: "Unique per router; a retried push repeats it" }),
    windowStart: z.iso.datetime({ offset: true }),
    windowEnd: z.iso.datetime({ offset: true }),
    lines: z
      .array(
        z.strictObject({
          lineId: z.uuid(),
          counts: CountsSchema.openapi({ description: `Answers by outcome: ${LIVE_OUTCOMES.join(", ")}` }),
          promptTokens: total,
          completionTokens: total,
          latencyMsSum: total,
          ttfbMsSum: total,
          heldBack: count.optional().openapi({
            description:
              "First attempts the table gave this line that the router sent to another line because it had ejected this one (docs/router.md#ejection); not answers. Absent: 0",
          }),
        }),
      )
      .max(MAX_REPORT_LINES),
  })
  .openapi("OutcomeReport");

export const OutcomeAckSchema = z
  .object({
    stored: z.number().int().openapi({ description: "Lines stored now" }),
    duplicate: z.boolean().openapi({ description: "The window was stored before (a retried push): nothing counted twice" }),
  })
  .openapi("OutcomeAck");

/** What a router pushes (core's OutcomeReport, which the router builds; test/packages/contract checks they are one type). */
export type OutcomeReportBody = z.infer<typeof OutcomeReportSchema>;
export type OutcomeReportLineBody = OutcomeReportBody["lines"][number];
export type OutcomeAck = z.infer<typeof OutcomeAckSchema>;
