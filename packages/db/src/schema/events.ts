import { bigint, index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

/** The timeline (SPEC §3 /v1/events). No foreign keys: history outlives the lines it speaks of. */
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
  },
  (t) => [index("events_at_idx").on(t.at), index("events_line_idx").on(t.lineId, t.id), index("events_kind_idx").on(t.kind, t.id)],
);
