import { sql } from "drizzle-orm";
import { bigint, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * The currently published table of each route. No foreign key: the row outlives a deleted route,
 * so a route created again under the same name continues its version numbers (routers keep ETags).
 */
export const publishedTables = pgTable("published_tables", {
  routeName: text("route_name").primaryKey(),
  version: bigint("version", { mode: "number" }).notNull(),
  generatedAt: timestamp("generated_at", { withTimezone: true, mode: "date" }).notNull(),
  mode: text("mode").notNull(),
  /** [{lineId, weight}] as core computed them. */
  lines: jsonb("lines").$type<{ lineId: string; weight: number }[]>().notNull().default(sql`'[]'::jsonb`),
});
