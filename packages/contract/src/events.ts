// The timeline (GET /v1/events): state and weight changes, table publishes, trend alerts, live evidence.
import { z } from "@hono/zod-openapi";

export const EVENT_KINDS = [
  "state_change",
  "weight_change",
  "table_published",
  "trend_alert",
  "live_evidence",
  // What a relay can fake (docs/scoring.md#what-a-relay-can-fake).
  "fingerprint",
  "shape_change",
  "usage",
] as const;

export const EventSchema = z
  .object({
    id: z.number().int(),
    at: z.string(),
    kind: z.string().openapi({
      description:
        "state_change | weight_change | table_published | trend_alert | live_evidence | fingerprint (a sample's answers moved from its anchor, or came back) | shape_change | usage (a sample's usage check started or stopped failing)",
    }),
    lineId: z.string().nullable(),
    route: z.string().nullable(),
    reason: z.string(),
    data: z.record(z.string(), z.unknown()).openapi({ description: "from/to, the probe result ids behind it, …" }),
  })
  .openapi("Event");

export const EventQuery = z.object({
  line: z.string().optional().openapi({ description: "Line id or name" }),
  route: z.string().optional(),
  kind: z.enum(EVENT_KINDS).optional(),
  since: z.iso.datetime({ offset: true }).optional().openapi({ description: "ISO time" }),
  before: z.coerce.number().int().min(1).optional().openapi({ description: "Page cursor: events older than this id" }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const EventPageSchema = z
  .object({
    events: z.array(EventSchema),
    nextBefore: z.number().int().nullable().openapi({ description: "Pass as ?before= for the next (older) page" }),
  })
  .openapi("EventPage");

export type EventResponse = z.infer<typeof EventSchema>;
export type EventPage = z.infer<typeof EventPageSchema>;
