// The service endpoints' bodies: liveness and readiness (docs/api.md).
import { z } from "@hono/zod-openapi";
import { ErrorSchema } from "./common";

export const LiveSchema = z.object({ status: z.literal("ok") }).openapi("Live");
export const HealthFaultsSchema = z
  .object({
    unappliedResults: z
      .number()
      .int()
      .openapi({ description: "Probe results and live judgments this replica's health machine could not apply" }),
    failSafeCooldowns: z
      .number()
      .int()
      .openapi({ description: "Lines sent to cooldown by the fail-safe, because a failing result of theirs could not be applied" }),
    last: z
      .object({ at: z.string(), line: z.string(), error: z.string() })
      .nullable()
      .openapi({ description: "The last fault: when, which line, the error's kind" }),
  })
  .openapi("HealthFaults", { description: "Faults of the health machine on this replica since it started (docs/health.md#fail-safe)" });
export const ReadySchema = z.object({ status: z.literal("ready"), database: z.literal("ok"), health: HealthFaultsSchema }).openapi("Ready");
export const NotReadySchema = ErrorSchema.extend({
  status: z.literal("not ready"),
  database: z.string().openapi({ description: "Why the database did not answer" }),
  health: HealthFaultsSchema,
}).openapi("NotReady");
