import { doublePrecision, index, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { lines } from "./lines";
import { samples } from "./samples";

/**
 * When each (line, sample) is next due. Replicas claim due rows with FOR UPDATE SKIP LOCKED and a
 * lease (`claimed_until`), so a probe runs once per slot whichever replica takes it.
 */
export const probeSchedule = pgTable(
  "probe_schedule",
  {
    lineId: uuid("line_id")
      .notNull()
      .references(() => lines.id, { onDelete: "cascade" }),
    sampleId: uuid("sample_id")
      .notNull()
      .references(() => samples.id, { onDelete: "cascade" }),
    nextAt: timestamp("next_at", { withTimezone: true, mode: "date" }).notNull(),
    /**
     * Where in its interval the pair probes, a fraction in [0, 1) (core's slots.ts): fast probing and
     * the regular cadence after it keep it. Null: a row stored before phases (its next_at's place).
     */
    phase: doublePrecision("phase"),
    /** Why the next probe is due: `schedule`, or `confirm` (a confirming re-probe after a failure). */
    trigger: text("trigger").notNull().default("schedule"),
    /** While a confirming re-probe is due: the regular slot it stands in front of, kept so the cadence holds. */
    regularAt: timestamp("regular_at", { withTimezone: true, mode: "date" }),
    /** After a trend alert (core's `fast_probe_until` effect) the line probes at the fast interval until this. */
    fastUntil: timestamp("fast_until", { withTimezone: true, mode: "date" }),
    claimedBy: text("claimed_by"),
    claimedUntil: timestamp("claimed_until", { withTimezone: true, mode: "date" }),
  },
  (t) => [primaryKey({ columns: [t.lineId, t.sampleId] }), index("probe_schedule_due_idx").on(t.nextAt)],
);
