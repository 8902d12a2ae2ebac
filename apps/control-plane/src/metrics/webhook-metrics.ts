// Webhook deliveries (docs/alerts.md#webhooks): read from the database at scrape time, so every
// replica reports the same counts whichever of them sent a delivery (take `max` across replicas).
import { type Database, errorSummary, listWebhooks, webhookOutbox, webhookQueues } from "@linewatch/db";
import { Counter, Gauge, type Registry } from "prom-client";
import type { Logger } from "../logger";

export const WEBHOOK_OUTCOMES = ["delivered", "failed", "dead_letter"] as const;

/** What the database holds of the sinks and their queues, read once per scrape. */
export interface WebhookScrape {
  sinks: {
    name: string;
    delivered: number;
    failedAttempts: number;
    deadLetters: number;
    pending: number;
    oldestPendingAt: number | null;
  }[];
  outbox: { events: number; oldestAt: number | null };
}

export async function readWebhookScrape(database: Pick<Database, "db">): Promise<WebhookScrape> {
  const db = database.db;
  const [rows, queues, outbox] = await Promise.all([listWebhooks(db), webhookQueues(db), webhookOutbox(db)]);
  const byId = new Map(queues.map((q) => [q.webhookId, q]));
  return {
    sinks: rows.map((r) => ({
      name: r.name,
      delivered: r.delivered,
      failedAttempts: r.failedAttempts,
      deadLetters: r.deadLetters,
      pending: byId.get(r.id)?.pending ?? 0,
      oldestPendingAt: byId.get(r.id)?.oldestEventAt?.getTime() ?? null,
    })),
    outbox: { events: outbox.events, oldestAt: outbox.oldestAt?.getTime() ?? null },
  };
}

/** linewatch_webhook_*: deliveries by outcome, each sink's queue and its oldest event's age, the outbox and its oldest event's age. */
export function registerWebhookMetrics(
  registry: Registry,
  read: () => Promise<WebhookScrape>,
  now: () => number,
  logger?: Pick<Logger, "warn">,
): void {
  // One read per scrape, shared by the collect()s prom-client starts together.
  let pending: Promise<WebhookScrape | null> | null = null;
  const scrape = () =>
    (pending ??= read()
      .catch((error: unknown) => {
        logger?.warn("metrics: cannot read the webhook queues", errorSummary(error));
        return null;
      })
      .finally(() => {
        pending = null;
      }));
  new Counter({
    name: "linewatch_webhook_deliveries_total",
    help: "Webhook delivery attempts by outcome: delivered (2xx), failed (retried later), dead_letter (given up after the retry window); every outcome of every sink is present from its creation.",
    labelNames: ["webhook", "outcome"] as const,
    registers: [registry],
    async collect() {
      const s = await scrape();
      this.reset();
      for (const sink of s?.sinks ?? []) {
        this.inc({ webhook: sink.name, outcome: "delivered" }, sink.delivered);
        this.inc({ webhook: sink.name, outcome: "failed" }, sink.failedAttempts);
        this.inc({ webhook: sink.name, outcome: "dead_letter" }, sink.deadLetters);
      }
    },
  });
  new Gauge({
    name: "linewatch_webhook_queue_depth",
    help: "Deliveries of a sink not yet delivered nor given up.",
    labelNames: ["webhook"] as const,
    registers: [registry],
    async collect() {
      const s = await scrape();
      this.reset();
      for (const sink of s?.sinks ?? []) this.set({ webhook: sink.name }, sink.pending);
    },
  });
  new Gauge({
    name: "linewatch_webhook_oldest_undelivered_age_seconds",
    help: "Age of the oldest event a sink has not been delivered yet (0: none waiting).",
    labelNames: ["webhook"] as const,
    registers: [registry],
    async collect() {
      const s = await scrape();
      this.reset();
      const t = now();
      for (const sink of s?.sinks ?? [])
        this.set({ webhook: sink.name }, sink.oldestPendingAt === null ? 0 : Math.max(0, (t - sink.oldestPendingAt) / 1000));
    },
  });
  new Gauge({
    name: "linewatch_webhook_outbox_oldest_age_seconds",
    help: "Age of the oldest event not yet fanned out to the webhook sinks (0: none): the fan-out runs every second, so it stays near 0.",
    registers: [registry],
    async collect() {
      const s = await scrape();
      this.reset();
      if (s) this.set(s.outbox.oldestAt === null ? 0 : Math.max(0, (now() - s.outbox.oldestAt) / 1000));
    },
  });
  new Gauge({
    name: "linewatch_webhook_outbox_events",
    help: "Events recorded and not yet fanned out to the webhook sinks (stays near 0 while the fan-out keeps up).",
    registers: [registry],
    async collect() {
      const s = await scrape();
      this.reset();
      if (s) this.set(s.outbox.events);
    },
  });
}
