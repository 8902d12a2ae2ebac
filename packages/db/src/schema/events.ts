import { sql } from "drizzle-orm";
import { bigint, boolean, index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

/** The timeline (docs/api.md /v1/events). No foreign keys: history outlives the lines it speaks of. */
export const events = pgTable(
  "events",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    at: timestamp("at", { withTimezone: true, mode: "date" }).notNull(),
    kind: text("kind").notNull(),
    lineId: uuid("line_id"),
    routeName: text("route_name"),
    reason: text("reason").notNull(),
    data: jsonb("data").$type<Record<string, unknown>>().notNull(),
    /** Makes recording idempotent across restarts and replicas. */
    dedupeKey: text("dedupe_key").unique(),
    /**
     * The webhook outbox: every event is written with it set, in the transaction that records it;
     * the webhook fan-out turns it into deliveries to the sinks that want it and clears it.
     */
    webhookPending: boolean("webhook_pending").notNull().default(true),
  },
  (t) => [
    index("events_at_idx").on(t.at),
    index("events_line_idx").on(t.lineId, t.id),
    index("events_kind_idx").on(t.kind, t.id),
    index("events_webhook_pending_idx").on(t.id).where(sql`webhook_pending`),
  ],
);
