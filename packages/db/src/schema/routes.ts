import type { HealthPolicy } from "@linewatch/core";
import { jsonb, pgTable, real, text, timestamp } from "drizzle-orm/pg-core";

export const routes = pgTable("routes", {
  name: text("name").primaryKey(),
  freeShareCap: real("free_share_cap").notNull().default(0.2),
  onAllDown: text("on_all_down").notNull().default("fail-open"),
  /** Per-route overrides of the health policy (SPEC §5 thresholds). */
  policy: jsonb("policy").$type<Partial<HealthPolicy>>(),
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});
