import { sql } from "drizzle-orm";
import { bigint, index, integer, jsonb, pgTable, text, timestamp, unique, uuid } from "drizzle-orm/pg-core";

/** Webhook sinks (docs/alerts.md#webhooks), with the counts of what became of their deliveries. */
export const webhooks = pgTable("webhooks", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull().unique(),
  url: text("url").notNull(),
  /** The webhook kinds the sink wants (core WEBHOOK_EVENT_KINDS). */
  events: jsonb("events").$type<string[]>().notNull(),
  /** Only events of these routes (a line's: the routes it is on); empty: every route. */
  routes: jsonb("routes").$type<string[]>().notNull().default(sql`'[]'::jsonb`),
  format: text("format").notNull(),
  /** The signing secret, AES-256-GCM like a line's key (see control-plane secrets); never returned. */
  secretEnc: text("secret_enc").notNull(),
  /** Counts over the sink's life, kept here so every replica reports the same (metrics, API). */
  delivered: bigint("delivered", { mode: "number" }).notNull().default(0),
  failedAttempts: bigint("failed_attempts", { mode: "number" }).notNull().default(0),
  deadLetters: bigint("dead_letters", { mode: "number" }).notNull().default(0),
  lastDeliveredAt: timestamp("last_delivered_at", { withTimezone: true, mode: "date" }),
  lastError: text("last_error"),
  lastErrorAt: timestamp("last_error_at", { withTimezone: true, mode: "date" }),
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull(),
});

/**
 * One event on its way to one sink: made from the event's outbox mark (events.webhook_pending) by
 * the fan-out, then claimed by one replica at a time (FOR UPDATE SKIP LOCKED, a lease, heartbeats)
 * and sent until it is delivered or its retry window ends (`dead`). A line's (or route's) deliveries
 * to a sink go in event order: one is sent only when none before it is still pending.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    webhookId: uuid("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    /** The event (events.id; no foreign key, like events themselves). */
    eventId: bigint("event_id", { mode: "number" }).notNull(),
    /** When the event happened: the age of the oldest undelivered one is measured from it. */
    eventAt: timestamp("event_at", { withTimezone: true, mode: "date" }).notNull(),
    /** The webhook kind it goes as (the narrowest, core webhookKindsOf). */
    kind: text("kind").notNull(),
    /** What its order is kept within: `line:<id>` or `route:<name>`. */
    orderKey: text("order_key").notNull(),
    /** The exact body, the same on every attempt. */
    body: text("body").notNull(),
    /** pending | delivered | dead */
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAt: timestamp("next_at", { withTimezone: true, mode: "date" }).notNull(),
    /** Retries stop here: a failure at or after it is a dead letter. */
    deadline: timestamp("deadline", { withTimezone: true, mode: "date" }).notNull(),
    /** The replica sending it (while pending), or that delivered it or gave it up. */
    claimedBy: text("claimed_by"),
    claimedUntil: timestamp("claimed_until", { withTimezone: true, mode: "date" }),
    lastError: text("last_error"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    doneAt: timestamp("done_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    unique("webhook_deliveries_event_uq").on(t.webhookId, t.eventId),
    index("webhook_deliveries_due_idx").on(t.nextAt).where(sql`status = 'pending'`),
    index("webhook_deliveries_order_idx").on(t.webhookId, t.orderKey, t.eventId).where(sql`status = 'pending'`),
    index("webhook_deliveries_done_idx").on(t.doneAt).where(sql`done_at is not null`),
  ],
);
