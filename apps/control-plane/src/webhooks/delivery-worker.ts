// Webhook deliveries (docs/alerts.md#delivery): fan the outbox out, claim due deliveries from the
// shared queue (replicas never double up: FOR UPDATE SKIP LOCKED, a lease, dead replicas' claims
// released by the heartbeats), sign and send each, and record what became of it. It runs beside the
// health machine, never in its way: the machine only marks the events it writes; a slow or hung
// receiver holds at most two of this worker's slots, each for at most the attempt's timeout.
import { nextWebhookAttempt, type TimelineEvent, webhookBody, webhookDeliveryId } from "@linewatch/core";
import {
  type AttemptOutcome,
  type ClaimedDelivery,
  claimWebhookDeliveries,
  errorSummary,
  finishWebhookAttempt,
  type WebhookRow,
} from "@linewatch/db";
import type { Agent } from "undici";
import type { AppDeps } from "../deps";
import type { RegistrySnapshot } from "../registry-cache";
import { WebhookFanOut } from "./fan-out";
import { createWebhookAgent, sendWebhook, type WebhookAttempt } from "./send-webhook";
import { signWebhook, WEBHOOK_HEADERS } from "./signature";

/** At most this many deliveries to one sink at once on a replica: a hung receiver cannot take every slot. */
export const PER_SINK_SLOTS = 2;
/** The lease outlives an attempt's timeout by this much (storing the outcome); heartbeats release a dead replica's sooner. */
const LEASE_SLACK_MS = 30_000;

export class WebhookWorker {
  private readonly fanOut: WebhookFanOut;
  private readonly agent: Agent;
  /** Deliveries under way, per sink. */
  private readonly busy = new Map<string, number>();
  private inFlight = 0;
  private claiming: Promise<number> | null = null;
  /** The last claim filled every free slot: more may be due. */
  private moreDue = false;
  private stopped = false;
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger" | "config" | "secrets" | "dnsLookup">,
    registry: { get(): Promise<RegistrySnapshot> },
    private readonly replica: string,
    private readonly rng: () => number = Math.random,
  ) {
    this.fanOut = new WebhookFanOut(deps, registry);
    this.agent = createWebhookAgent(deps.config.allowUpstreamHosts, deps.dnsLookup);
  }

  /** Deliveries this replica is sending now. */
  get sending(): number {
    return this.inFlight;
  }

  /** Deliveries to one sink this replica is sending now (at most PER_SINK_SLOTS). */
  sendingTo(webhookId: string): number {
    return this.busy.get(webhookId) ?? 0;
  }

  /**
   * One scheduler tick: fan new events out, claim what is due into the free slots and start sending
   * it. Returns once the sends are started, never waiting for a receiver.
   */
  async tick(): Promise<number> {
    if (this.stopped) return 0;
    await this.fanOut.run();
    return this.claim();
  }

  /** A tick, then wait for what it sent and what that made due (tests, benchmarks). */
  async runOnce(): Promise<number> {
    const n = await this.tick();
    await this.drain();
    return n;
  }

  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** No new claims; the deliveries under way end (each within its timeout) and are recorded. */
  async close(): Promise<void> {
    this.stopped = true;
    await this.drain();
    await this.agent.close().catch(() => undefined);
  }

  /**
   * Send a test event to a sink now, signed like any delivery, outside the queue (nothing is
   * stored or retried): what `POST /v1/webhooks/:id/test` answers.
   */
  async sendTest(sink: WebhookRow): Promise<WebhookAttempt> {
    const now = this.deps.clock.now();
    const event: TimelineEvent = {
      id: 0,
      at: now,
      kind: "test",
      lineId: null,
      route: null,
      reason: `a test delivery to webhook ${sink.name}`,
      data: {},
    };
    const body = webhookBody(sink.format === "slack" ? "slack" : "json", {
      deliveryId: `test-${now}-${sink.id}`,
      kinds: [],
      event,
      line: null,
      routes: [],
    });
    let secret: string;
    try {
      secret = this.deps.secrets.decrypt(sink.secretEnc);
    } catch (error) {
      return { ok: false, status: null, latencyMs: 0, error: `cannot sign: ${errorSummary(error).error}` };
    }
    return this.send(sink.url, secret, { id: `test-${now}-${sink.id}`, kind: "test" }, body);
  }

  /** Claim due deliveries into the free slots (ticks and refills take turns) and start them. */
  private async claim(): Promise<number> {
    while (this.claiming) await this.claiming.catch(() => 0);
    const claim = this.claimOnce();
    this.claiming = claim;
    try {
      return await claim;
    } finally {
      if (this.claiming === claim) this.claiming = null;
    }
  }

  private async claimOnce(): Promise<number> {
    const free = this.deps.config.webhookSlots - this.inFlight;
    if (free <= 0 || this.stopped) return 0;
    const now = this.deps.clock.now();
    const claimed = await claimWebhookDeliveries(this.deps.database.db, {
      replica: this.replica,
      now: new Date(now),
      leaseUntil: new Date(now + this.deps.config.webhookTimeoutMs + LEASE_SLACK_MS),
      limit: free,
      perSink: PER_SINK_SLOTS,
      busy: this.busy,
    });
    this.moreDue = claimed.length === free;
    for (const c of claimed) {
      this.inFlight++;
      this.busy.set(c.webhookId, (this.busy.get(c.webhookId) ?? 0) + 1);
      this.track(this.deliver(c));
    }
    return claimed.length;
  }

  /**
   * Send one claimed delivery and record the outcome; then its slot refills when that can find work
   * at once: it was delivered (its line's next event, and the sink's waiting retries, are due now) or
   * the last claim was full. A failure makes nothing due now: the next tick will do.
   */
  private async deliver(c: ClaimedDelivery): Promise<void> {
    let delivered = false;
    try {
      let attempt: WebhookAttempt;
      try {
        attempt = await this.send(c.url, this.deps.secrets.decrypt(c.secretEnc), { id: deliveryIdOf(c), kind: c.kind }, c.body);
      } catch (error) {
        // The secret cannot be opened (a rotation missed it): a failure like any other, retried until the window ends.
        attempt = { ok: false, status: null, latencyMs: 0, error: `cannot sign: ${errorSummary(error).error}` };
      }
      const now = this.deps.clock.now();
      const outcome: AttemptOutcome = attempt.ok
        ? { delivered: true }
        : (() => {
            const next = nextWebhookAttempt(c.attempts, now, c.deadline.getTime(), this.rng);
            return { delivered: false, error: attempt.error ?? "failed", retryAt: next.retry ? new Date(next.at) : null };
          })();
      const recorded = await finishWebhookAttempt(this.deps.database.db, this.replica, c.id, new Date(now), outcome);
      delivered = recorded && outcome.delivered;
      if (!recorded)
        this.deps.logger.warn("a webhook delivery's claim was taken over before its outcome was stored", {
          webhook: c.webhookName,
          event: c.eventId,
        });
      else if (!outcome.delivered && outcome.retryAt === null)
        this.deps.logger.warn("webhook delivery given up (dead letter)", {
          webhook: c.webhookName,
          event: c.eventId,
          attempts: c.attempts,
          error: outcome.error,
        });
    } catch (error) {
      // The outcome could not be stored (database away): the claim's lease returns it to the queue.
      this.deps.logger.warn("cannot record a webhook delivery's outcome", {
        webhook: c.webhookName,
        event: c.eventId,
        ...errorSummary(error),
      });
    } finally {
      this.inFlight--;
      const n = (this.busy.get(c.webhookId) ?? 1) - 1;
      if (n > 0) this.busy.set(c.webhookId, n);
      else this.busy.delete(c.webhookId);
      if (delivered || this.moreDue) this.refill();
    }
  }

  /** A slot is free and there may be work for it now: claim again at once. */
  private refill(): void {
    if (this.stopped || this.claiming) return;
    this.track(
      this.claim().catch((error: unknown) => {
        this.moreDue = false;
        this.deps.logger.warn("cannot claim webhook deliveries", errorSummary(error));
      }),
    );
  }

  private send(url: string, secret: string, delivery: { id: string; kind: string }, body: string): Promise<WebhookAttempt> {
    const timestamp = Math.floor(this.deps.clock.now() / 1000);
    const headers = {
      [WEBHOOK_HEADERS.timestamp]: String(timestamp),
      [WEBHOOK_HEADERS.signature]: signWebhook(secret, timestamp, body),
      [WEBHOOK_HEADERS.delivery]: delivery.id,
      [WEBHOOK_HEADERS.event]: delivery.kind,
    };
    return sendWebhook(this.agent, url, headers, body, this.deps.config.webhookTimeoutMs, () => this.deps.clock.now());
  }

  private track(task: Promise<unknown>): void {
    this.running.add(task);
    void task.finally(() => this.running.delete(task));
  }
}

/** The idempotency key, as the body carries it. */
const deliveryIdOf = (c: ClaimedDelivery) => webhookDeliveryId(c.eventId, c.webhookId);
