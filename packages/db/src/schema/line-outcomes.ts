import type { OutcomeCounts } from "@linewatch/core";
import { bigint, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { lines } from "./lines";

/**
 * Live-traffic outcome windows (docs/live-evidence.md): one row per router, report window and line. The unique
 * (router, window, line) key makes a retried push store nothing twice.
 */
export const lineOutcomes = pgTable(
  "line_outcomes",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    routerId: text("router_id").notNull(),
    windowId: text("window_id").notNull(),
    lineId: uuid("line_id")
      .notNull()
      .references(() => lines.id, { onDelete: "cascade" }),
    windowStart: timestamp("window_start", { withTimezone: true, mode: "date" }).notNull(),
    windowEnd: timestamp("window_end", { withTimezone: true, mode: "date" }).notNull(),
    receivedAt: timestamp("received_at", { withTimezone: true, mode: "date" }).notNull(),
    counts: jsonb("counts").$type<OutcomeCounts>().notNull(),
    requests: integer("requests").notNull(),
    promptTokens: bigint("prompt_tokens", { mode: "number" }).notNull(),
    completionTokens: bigint("completion_tokens", { mode: "number" }).notNull(),
    latencyMsSum: bigint("latency_ms_sum", { mode: "number" }).notNull(),
    ttfbMsSum: bigint("ttfb_ms_sum", { mode: "number" }).notNull(),
    /** First attempts the router sent elsewhere because it had ejected the line (docs/router.md#ejection). */
    heldBack: integer("held_back").notNull().default(0),
  },
  (t) => [
    uniqueIndex("line_outcomes_window_uq").on(t.routerId, t.windowId, t.lineId),
    index("line_outcomes_line_end_idx").on(t.lineId, t.windowEnd),
    index("line_outcomes_received_idx").on(t.receivedAt),
  ],
);
