import { pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * The control-plane processes sharing this database, each with its last heartbeat. A probe claimed
 * by a replica whose heartbeat stopped is released for another to take (its process died), instead
 * of waiting out a fixed lease.
 */
export const replicas = pgTable("replicas", {
  id: text("id").primaryKey(),
  heartbeatAt: timestamp("heartbeat_at", { withTimezone: true, mode: "date" }).notNull(),
});
