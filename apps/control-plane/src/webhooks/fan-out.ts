// The webhook outbox's fan-out (docs/alerts.md#delivery): events are recorded with their outbox mark
// in the same statement as the health or table change behind them; this turns marked events into
// one delivery per sink that wants them and clears the marks, in one transaction. One replica fans
// out at a time, in event order, so a line's deliveries to a sink are made in the order of its events.
import { type TimelineEvent, type WebhookFormat, webhookBody, webhookDeliveryId, webhookKindsOf } from "@linewatch/core";
import {
  type Db,
  fanOutDeliveries,
  listWebhooks,
  lockWebhookFanOut,
  type OutboxEvent,
  outboxEvents,
  type WebhookDeliveryInsert,
  type WebhookRow,
} from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { RegistrySnapshot } from "../registry-cache";

/** Events fanned out per transaction. */
export const FAN_OUT_BATCH = 500;

export const timelineEvent = (e: OutboxEvent): TimelineEvent => ({
  id: e.id,
  at: e.at.getTime(),
  kind: e.kind,
  lineId: e.lineId,
  route: e.routeName,
  reason: e.reason,
  data: e.data,
});

/**
 * The deliveries of these events: to each sink that existed when the event happened, wants one of
 * its kinds and (with a route filter) shares a route with it. Pure but for the clock it is given.
 */
export function planDeliveries(
  events: readonly OutboxEvent[],
  sinks: readonly WebhookRow[],
  snapshot: Pick<RegistrySnapshot, "lines">,
  now: number,
  retryWindowMs: number,
): WebhookDeliveryInsert[] {
  const out: WebhookDeliveryInsert[] = [];
  if (sinks.length === 0) return out;
  for (const row of events) {
    const event = timelineEvent(row);
    const kinds = webhookKindsOf(event);
    if (kinds.length === 0) continue;
    const line = event.lineId ? snapshot.lines.get(event.lineId) : undefined;
    const lineName = typeof event.data.line === "string" ? event.data.line : (line?.name ?? null);
    const routes = event.route ? [event.route] : (line?.routes.map((m) => m.route) ?? []);
    const orderKey = event.lineId ? `line:${event.lineId}` : event.route ? `route:${event.route}` : `event:${event.id}`;
    for (const sink of sinks) {
      // A sink gets what happens from its creation on, never the history before it.
      if (event.at < sink.createdAt.getTime()) continue;
      if (!kinds.some((k) => sink.events.includes(k))) continue;
      if (sink.routes.length > 0 && !routes.some((r) => sink.routes.includes(r))) continue;
      const deliveryId = webhookDeliveryId(event.id, sink.id);
      out.push({
        webhookId: sink.id,
        eventId: event.id,
        eventAt: row.at,
        kind: kinds[0] ?? event.kind,
        orderKey,
        body: webhookBody(sink.format as WebhookFormat, { deliveryId, kinds, event, line: lineName, routes }),
        nextAt: new Date(now),
        deadline: new Date(now + retryWindowMs),
        createdAt: new Date(now),
      });
    }
  }
  return out;
}

export class WebhookFanOut {
  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "config">,
    private readonly registry: { get(): Promise<RegistrySnapshot> },
  ) {}

  /** Fan the outbox out until it is empty (or another replica is at it); returns how many events it took. */
  async run(): Promise<number> {
    // The usual tick: nothing new. One indexed read, no transaction.
    if ((await outboxEvents(this.deps.database.db, 1)).length === 0) return 0;
    let total = 0;
    for (;;) {
      // Read before the transaction: on the embedded database a read outside it would wait for it.
      const snapshot = await this.registry.get();
      const n = await this.deps.database.db.transaction((tx) => this.batch(tx, snapshot));
      total += n;
      if (n < FAN_OUT_BATCH) return total;
    }
  }

  private async batch(tx: Db, snapshot: RegistrySnapshot): Promise<number> {
    if (!(await lockWebhookFanOut(tx))) return 0;
    const events = await outboxEvents(tx, FAN_OUT_BATCH);
    if (events.length === 0) return 0;
    const sinks = await listWebhooks(tx);
    const now = this.deps.clock.now();
    const deliveries = planDeliveries(events, sinks, snapshot, now, this.deps.config.webhookRetryWindowMs);
    await fanOutDeliveries(
      tx,
      events.map((e) => e.id),
      deliveries,
    );
    return events.length;
  }
}
