import { integer, jsonb, pgTable, real, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { lines } from "./lines";

/** The persisted health state machine of a line (core's LineHealth as JSON) and its probe schedule. */
export const lineHealth = pgTable("line_health", {
  lineId: uuid("line_id")
    .primaryKey()
    .references(() => lines.id, { onDelete: "cascade" }),
  health: jsonb("health").$type<Record<string, unknown>>().notNull(),
  score: real("score"),
  /** Optimistic concurrency: bumped on each write. */
  revision: integer("revision").notNull().default(0),
  nextProbeAt: timestamp("next_probe_at", { withTimezone: true, mode: "date" }),
  claimedBy: text("claimed_by"),
  claimedUntil: timestamp("claimed_until", { withTimezone: true, mode: "date" }),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});
