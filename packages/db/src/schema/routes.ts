import { DEFAULT_ROUTE_SETTINGS, type HealthPolicy, type OnAllDown } from "@linewatch/core";
import { jsonb, pgTable, real, text, timestamp } from "drizzle-orm/pg-core";

export const routes = pgTable("routes", {
  name: text("name").primaryKey(),
  freeShareCap: real("free_share_cap").notNull().default(DEFAULT_ROUTE_SETTINGS.freeShareCap),
  onAllDown: text("on_all_down").$type<OnAllDown>().notNull().default(DEFAULT_ROUTE_SETTINGS.onAllDown),
  /** Per-route overrides of the health policy (docs/health.md thresholds). */
  policy: jsonb("policy").$type<Partial<HealthPolicy>>(),
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});
