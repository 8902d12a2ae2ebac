import { integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * The control-plane processes sharing this database, each with its last heartbeat. A probe claimed
 * by a replica whose heartbeat stopped is released for another to take (its process died), instead
 * of waiting out a fixed lease.
 */
export const replicas = pgTable("replicas", {
  id: text("id").primaryKey(),
  heartbeatAt: timestamp("heartbeat_at", { withTimezone: true, mode: "date" }).notNull(),
  /**
   * Where the replica's process runs (host name and pid): a process starting on the same host sees
   * at once that a previous one's pid is gone and takes its claims over (restart-claims.ts), instead
   * of waiting for its heartbeat to go stale. Null: a replica of a version before these were kept.
   */
  host: text("host"),
  pid: integer("pid"),
});
