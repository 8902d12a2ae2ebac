import type { Health } from "@linewatch/core";
import { index, integer, jsonb, pgTable, real, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { lines } from "./lines";

/** The persisted health state machine of a line (core's Health as JSON). */
export const lineHealth = pgTable(
  "line_health",
  {
    lineId: uuid("line_id")
      .primaryKey()
      .references(() => lines.id, { onDelete: "cascade" }),
    /** Written as core's Health; read back through parseHealth (older records lack newer fields). */
    health: jsonb("health").$type<Health>().notNull(),
    state: text("state").notNull(),
    score: real("score"),
    /** Bumped on each write; event dedupe keys use it so a replayed transition records nothing twice. */
    revision: integer("revision").notNull().default(0),
    /** When time alone next changes this line's health (cooldown end, probation step, hold expiry). */
    tickAt: timestamp("tick_at", { withTimezone: true, mode: "date" }),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("line_health_tick_idx").on(t.tickAt)],
);
