import type { ProbeCheck, ProbeRelay, ScoreComponents } from "@linewatch/core";
import { sql } from "drizzle-orm";
import { bigint, boolean, index, integer, jsonb, pgTable, real, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { lines } from "./lines";
import { samples } from "./samples";

export const probeResults = pgTable(
  "probe_results",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    lineId: uuid("line_id")
      .notNull()
      .references(() => lines.id, { onDelete: "cascade" }),
    sampleId: uuid("sample_id")
      .notNull()
      .references(() => samples.id, { onDelete: "cascade" }),
    startedAt: timestamp("started_at", { withTimezone: true, mode: "date" }).notNull(),
    latencyMs: integer("latency_ms").notNull(),
    status: integer("status"),
    errorClass: text("error_class"),
    hardFailure: boolean("hard_failure").notNull(),
    passed: boolean("passed").notNull(),
    score: real("score").notNull(),
    components: jsonb("components").$type<ScoreComponents>().notNull(),
    /** Each expectation's verdict (core ProbeCheck); empty for a hard failure. */
    checks: jsonb("checks").$type<ProbeCheck[]>().notNull().default(sql`'[]'::jsonb`),
    contentLength: integer("content_length").notNull(),
    contentHash: text("content_hash"),
    excerpt: text("excerpt").notNull().default(""),
    reasons: jsonb("reasons").$type<string[]>().notNull(),
    tokens: integer("tokens"),
    /**
     * What a relay can fake, as this probe saw it (core ProbeRelay): the phrasing sent, the fingerprint
     * and usage steps the health machine applied, the billing evidence and the answer's shape; null
     * for a hard failure and for results stored before it was kept.
     */
    relay: jsonb("relay").$type<ProbeRelay>(),
    /** Scheduled slot (ms, interval-aligned) so replicas never store the same scheduled probe twice; null for manual probes. */
    slot: bigint("slot", { mode: "number" }),
    trigger: text("trigger").notNull().default("schedule"),
  },
  (t) => [
    index("probe_results_line_time_idx").on(t.lineId, t.startedAt),
    index("probe_results_line_sample_time_idx").on(t.lineId, t.sampleId, t.startedAt),
    index("probe_results_time_idx").on(t.startedAt),
    uniqueIndex("probe_results_slot_uq").on(t.lineId, t.sampleId, t.slot),
  ],
);
