import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { events, webhookDeliveries, webhooks } from "../schema/index";
import { executeRows, jsonRowsParam } from "./probe-results";

export type WebhookRow = typeof webhooks.$inferSelect;
export type WebhookWrite = Pick<WebhookRow, "name" | "url" | "events" | "routes" | "format" | "secretEnc">;
export type OutboxEvent = Pick<typeof events.$inferSelect, "id" | "at" | "kind" | "lineId" | "routeName" | "reason" | "data">;

export async function listWebhooks(db: Db): Promise<WebhookRow[]> {
  return db.select().from(webhooks).orderBy(asc(webhooks.name));
}

export async function getWebhook(db: Db, id: string): Promise<WebhookRow | null> {
  const [row] = await db.select().from(webhooks).where(eq(webhooks.id, id));
  return row ?? null;
}

export async function insertWebhook(db: Db, write: WebhookWrite, now: Date): Promise<WebhookRow> {
  const [row] = await db
    .insert(webhooks)
    .values({ ...write, createdAt: now, updatedAt: now })
    .returning();
  if (!row) throw new Error("insert returned no row");
  return row;
}

export async function updateWebhook(db: Db, id: string, patch: Partial<WebhookWrite>, now: Date): Promise<WebhookRow | null> {
  const [row] = await db
    .update(webhooks)
    .set({ ...patch, updatedAt: now })
    .where(eq(webhooks.id, id))
    .returning();
  return row ?? null;
}

/** Its deliveries, pending or not, go with it. */
export async function deleteWebhook(db: Db, id: string): Promise<boolean> {
  const rows = await db.delete(webhooks).where(eq(webhooks.id, id)).returning({ id: webhooks.id });
  return rows.length > 0;
}

/** A sink's queue: deliveries not yet delivered or given up, and when the oldest one's event happened. */
export interface WebhookQueue {
  webhookId: string;
  pending: number;
  oldestEventAt: Date | null;
}

/** Every sink's queue (sinks with nothing pending are absent). Served by the pending-only index. */
export async function webhookQueues(db: Db): Promise<WebhookQueue[]> {
  const rows = await db
    .select({
      webhookId: webhookDeliveries.webhookId,
      pending: sql<number>`count(*)::int`,
      oldest: sql<string | null>`min(${webhookDeliveries.eventAt})::text`,
    })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.status, "pending"))
    .groupBy(webhookDeliveries.webhookId);
  return rows.map((r) => ({ webhookId: r.webhookId, pending: Number(r.pending), oldestEventAt: r.oldest ? new Date(r.oldest) : null }));
}

/** Events recorded and not yet fanned out to the sinks (the outbox), and the oldest one's time. */
export async function webhookOutbox(db: Db): Promise<{ events: number; oldestAt: Date | null }> {
  const result = await db.execute(sql`select count(*)::int as n, min(at)::text as oldest from ${events} where webhook_pending`);
  const row = executeRows<{ n: number; oldest: string | null }>(result)[0];
  return { events: Number(row?.n ?? 0), oldestAt: row?.oldest ? new Date(row.oldest) : null };
}

/**
 * In a transaction: whether this one fans the outbox out. One replica at a time (a transaction-level
 * advisory lock, let go at commit), so a line's deliveries are made in the order of its events.
 */
export async function lockWebhookFanOut(tx: Db): Promise<boolean> {
  const result = await tx.execute(sql`select pg_try_advisory_xact_lock(hashtext('linewatch-webhook-fan-out')) as locked`);
  return executeRows<{ locked: boolean }>(result)[0]?.locked === true;
}

/** The oldest events still marked for the webhook fan-out (the partial index holds only those). */
export async function outboxEvents(tx: Db, limit: number): Promise<OutboxEvent[]> {
  return tx
    .select({
      id: events.id,
      at: events.at,
      kind: events.kind,
      lineId: events.lineId,
      routeName: events.routeName,
      reason: events.reason,
      data: events.data,
    })
    .from(events)
    .where(eq(events.webhookPending, true))
    .orderBy(asc(events.id))
    .limit(limit);
}

export interface WebhookDeliveryInsert {
  webhookId: string;
  eventId: number;
  eventAt: Date;
  kind: string;
  orderKey: string;
  body: string;
  nextAt: Date;
  deadline: Date;
  createdAt: Date;
}

/**
 * Turn fanned-out events into deliveries and clear their outbox marks, in one statement: a
 * delivery that exists already (a fan-out that ran twice) is skipped.
 */
export async function fanOutDeliveries(tx: Db, eventIds: number[], deliveries: WebhookDeliveryInsert[]): Promise<void> {
  if (eventIds.length === 0) return;
  const rows = jsonRowsParam(
    deliveries.map((d) => ({
      webhook_id: d.webhookId,
      event_id: d.eventId,
      event_at: d.eventAt.toISOString(),
      kind: d.kind,
      order_key: d.orderKey,
      body: d.body,
      next_at: d.nextAt.toISOString(),
      deadline: d.deadline.toISOString(),
      created_at: d.createdAt.toISOString(),
    })),
  );
  await tx.execute(sql`
    with ins as (
      insert into ${webhookDeliveries} (webhook_id, event_id, event_at, kind, order_key, body, next_at, deadline, created_at)
      select d.webhook_id, d.event_id, d.event_at, d.kind, d.order_key, d.body, d.next_at, d.deadline, d.created_at
      from jsonb_to_recordset(${rows}::jsonb) as d(webhook_id uuid, event_id bigint, event_at timestamptz, kind text, order_key text, body text, next_at timestamptz, deadline timestamptz, created_at timestamptz)
      where exists (select 1 from ${webhooks} w where w.id = d.webhook_id)
      order by d.event_id
      on conflict (webhook_id, event_id) do nothing
      returning 1)
    update ${events} set webhook_pending = false
    where id in (select jsonb_array_elements_text(${JSON.stringify(eventIds)}::jsonb)::bigint)`);
}

/** A delivery claimed to be sent, with what sending it needs. */
export interface ClaimedDelivery {
  id: number;
  webhookId: string;
  webhookName: string;
  url: string;
  secretEnc: string;
  eventId: number;
  kind: string;
  body: string;
  /** Attempts so far, this one included. */
  attempts: number;
  deadline: Date;
}

/**
 * Claim up to `limit` deliveries that are due for `replica` until `leaseUntil`: each the oldest
 * pending one of its sink and line (or route), at most `perSink` per sink less what this replica
 * already sends to it (`busy`). SKIP LOCKED lets replicas claim side by side; the claim's conditions
 * sit on the locked rows, so a delivery another replica claimed meanwhile is not claimed twice.
 * The attempt is counted as it is claimed (a process killed mid-send has used one).
 */
export async function claimWebhookDeliveries(
  db: Db,
  opts: { replica: string; now: Date; leaseUntil: Date; limit: number; perSink: number; busy: Map<string, number> },
): Promise<ClaimedDelivery[]> {
  if (opts.limit <= 0) return [];
  const now = opts.now.toISOString();
  const busy = jsonRowsParam([...opts.busy].map(([webhook_id, n]) => ({ webhook_id, n })));
  const d = webhookDeliveries;
  const result = await db.execute(sql`
    with ready as (
      select d.id, row_number() over (partition by d.webhook_id order by d.next_at, d.id) as rn, d.webhook_id
      from ${d} d
      where d.status = 'pending' and d.next_at <= ${now}::timestamptz
        and (d.claimed_until is null or d.claimed_until < ${now}::timestamptz)
        and not exists (
          select 1 from ${d} p
          where p.status = 'pending' and p.webhook_id = d.webhook_id and p.order_key = d.order_key and p.event_id < d.event_id)),
    room as (
      select r.id from ready r
      left join jsonb_to_recordset(${busy}::jsonb) as b(webhook_id uuid, n int) on b.webhook_id = r.webhook_id
      where r.rn <= ${opts.perSink} - coalesce(b.n, 0)),
    c as (
      update ${d} set claimed_by = ${opts.replica}, claimed_until = ${opts.leaseUntil.toISOString()}::timestamptz, attempts = attempts + 1
      where id in (
        select x.id from ${d} x
        where x.id in (select id from room)
          and x.status = 'pending' and x.next_at <= ${now}::timestamptz
          and (x.claimed_until is null or x.claimed_until < ${now}::timestamptz)
        order by x.next_at, x.id
        limit ${opts.limit}
        for update skip locked)
      returning id, webhook_id, event_id, kind, body, attempts, deadline)
    select coalesce(json_agg(json_build_object(
      'id', c.id, 'webhookId', c.webhook_id, 'webhookName', w.name, 'url', w.url, 'secretEnc', w.secret_enc,
      'eventId', c.event_id, 'kind', c.kind, 'body', c.body, 'attempts', c.attempts, 'deadline', c.deadline) order by c.id), '[]'::json)::text as rows
    from c join ${webhooks} w on w.id = c.webhook_id`);
  const rows = JSON.parse(executeRows<{ rows: string }>(result)[0]?.rows ?? "[]") as (Omit<
    ClaimedDelivery,
    "deadline" | "id" | "eventId"
  > & {
    id: number | string;
    eventId: number | string;
    deadline: string;
  })[];
  return rows.map((r) => ({ ...r, id: Number(r.id), eventId: Number(r.eventId), deadline: new Date(r.deadline) }));
}

/** The outcome of one attempt: delivered, failed with another attempt at `retryAt`, or failed for good (`retryAt` null). */
export type AttemptOutcome = { delivered: true } | { delivered: false; error: string; retryAt: Date | null };

/**
 * Record an attempt's outcome and count it on its sink, in one statement. Only the claimant may
 * (a claim another replica took over is not overwritten); returns whether it did. A finished
 * delivery keeps `claimed_by`: the replica that delivered it or gave it up.
 */
export async function finishWebhookAttempt(db: Db, replica: string, id: number, now: Date, outcome: AttemptOutcome): Promise<boolean> {
  const at = now.toISOString();
  const d = webhookDeliveries;
  const mine = sql`id = ${id} and claimed_by = ${replica} and status = 'pending'`;
  let result: unknown;
  if (outcome.delivered) {
    // The receiver answers again: the sink's other deliveries waiting out a backoff are due now
    // (a receiver back after a long outage is not left waiting for each line's next retry).
    result = await db.execute(sql`
      with d as (
        update ${d} set status = 'delivered', done_at = ${at}::timestamptz, claimed_until = null, last_error = null
        where ${mine} returning webhook_id),
      due as (
        update ${d} p set next_at = ${at}::timestamptz
        where p.webhook_id in (select webhook_id from d) and p.status = 'pending' and p.attempts > 0
          and p.next_at > ${at}::timestamptz and p.claimed_by is null
        returning 1)
      update ${webhooks} w set delivered = delivered + 1, last_delivered_at = ${at}::timestamptz
      from d where w.id = d.webhook_id returning 1 as done`);
  } else if (outcome.retryAt) {
    result = await db.execute(sql`
      with d as (
        update ${d} set next_at = ${outcome.retryAt.toISOString()}::timestamptz, claimed_by = null, claimed_until = null, last_error = ${outcome.error}
        where ${mine} returning webhook_id)
      update ${webhooks} w set failed_attempts = failed_attempts + 1, last_error = ${outcome.error}, last_error_at = ${at}::timestamptz
      from d where w.id = d.webhook_id returning 1 as done`);
  } else {
    result = await db.execute(sql`
      with d as (
        update ${d} set status = 'dead', done_at = ${at}::timestamptz, claimed_until = null, last_error = ${outcome.error}
        where ${mine} returning webhook_id)
      update ${webhooks} w set dead_letters = dead_letters + 1, last_error = ${outcome.error}, last_error_at = ${at}::timestamptz
      from d where w.id = d.webhook_id returning 1 as done`);
  }
  return executeRows(result).length > 0;
}

/** Release the delivery claims held under `replica` (its previous life's, at start; see releaseClaimsOf). */
export async function releaseWebhookClaimsOf(db: Db, replica: string): Promise<number> {
  const rows = await db
    .update(webhookDeliveries)
    .set({ claimedBy: null, claimedUntil: null })
    .where(and(eq(webhookDeliveries.claimedBy, replica), eq(webhookDeliveries.status, "pending")))
    .returning({ id: webhookDeliveries.id });
  return rows.length;
}

/** Release every delivery claim: the embedded database is one process's (see releaseAllClaims). */
export async function releaseAllWebhookClaims(db: Db): Promise<number> {
  const rows = await db
    .update(webhookDeliveries)
    .set({ claimedBy: null, claimedUntil: null })
    .where(and(sql`${webhookDeliveries.claimedBy} is not null`, eq(webhookDeliveries.status, "pending")))
    .returning({ id: webhookDeliveries.id });
  return rows.length;
}

/** Retention: delivered and dead deliveries finished before `before`, at most `batch` of them. */
export async function deleteOldWebhookDeliveries(db: Db, before: Date, batch: number): Promise<number> {
  const result = await db.execute(sql`
    delete from ${webhookDeliveries} where id in (
      select id from ${webhookDeliveries} where done_at is not null and done_at < ${before.toISOString()}::timestamptz limit ${batch})
    returning 1`);
  return executeRows(result).length;
}

/** Swap a sink's sealed secret, only while it still holds `expected` (a rotation never overwrites a change made meanwhile). */
export async function replaceWebhookSecretEnc(db: Db, id: string, expected: string, next: string): Promise<boolean> {
  const rows = await db
    .update(webhooks)
    .set({ secretEnc: next })
    .where(and(eq(webhooks.id, id), eq(webhooks.secretEnc, expected)))
    .returning({ id: webhooks.id });
  return rows.length > 0;
}
