import type { PublishedLine } from "@linewatch/core";
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
  /** What this version writes; a row from another version of linewatch is checked by parsePublishedLines when read. */
  lines: jsonb("lines").$type<PublishedLine[]>().notNull().default(sql`'[]'::jsonb`),
});
