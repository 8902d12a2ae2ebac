import { sql } from "drizzle-orm";
import { bigint, jsonb, pgSequence, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { routes } from "./routes";

/** One sequence for every route's table version, so a re-created route never reuses an old version number. */
export const tableVersionSeq = pgSequence("table_version_seq", { startWith: 1 });

/** The currently published table of each route. */
export const publishedTables = pgTable("published_tables", {
  routeName: text("route_name")
    .primaryKey()
    .references(() => routes.name, { onDelete: "cascade" }),
  version: bigint("version", { mode: "number" }).notNull(),
  generatedAt: timestamp("generated_at", { withTimezone: true, mode: "date" }).notNull(),
  mode: text("mode").notNull(),
  lines: jsonb("lines").$type<unknown[]>().notNull().default(sql`'[]'::jsonb`),
});
