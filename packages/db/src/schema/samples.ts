import { sql } from "drizzle-orm";
import { integer, jsonb, pgTable, real, text, timestamp, uuid } from "drizzle-orm/pg-core";

export const samples = pgTable("samples", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull().unique(),
  protocol: text("protocol").notNull(),
  routes: jsonb("routes").$type<string[]>().notNull().default(sql`'[]'::jsonb`),
  request: jsonb("request").$type<Record<string, unknown>>().notNull(),
  expect: jsonb("expect").$type<Record<string, unknown>>().notNull(),
  /** Other phrasings of the request's prompt, rotated from probe to probe (core fingerprint/variants.ts). */
  variants: jsonb("variants").$type<string[]>().notNull().default(sql`'[]'::jsonb`),
  timeoutMs: integer("timeout_ms"),
  weight: real("weight").notNull().default(1),
  /** `shipped` rows come from probes/*.yaml and are re-upserted at start-up; `api` rows are the operator's. */
  source: text("source").notNull().default("api"),
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});
