// Webhook deliveries in real time (issue 26, docs/alerts.md#delivery): a receiver that answers 500
// for 30 s then 200 gets every event afterwards, in order per line, with no doubles beyond the
// retries its 500s caused; a dead receiver is dead-lettered after the retry window; two replicas on
// one PostgreSQL deliver each event once; a replica killed (-9) mid-delivery loses nothing (the
// other takes its claim over once its heartbeat stops). The first two run in process on the test
// database (PGlite or DATABASE_URL); the replicas are child processes on PostgreSQL.
import type { WebhookBody, WebhookResponse } from "@linewatch/contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../helpers/control-plane";
import { type ControlPlaneProcess, startControlPlaneProcess } from "../helpers/process";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver";
import { type Api, createRoute, eventually, faultDatabase, inspect } from "./support";

const SECRET = "whsec-faults-0123456789abcdef";

interface EventView {
  id: number;
  kind: string;
  lineId: string | null;
  data: Record<string, unknown>;
}

async function createSink(cp: Api, body: Record<string, unknown>): Promise<WebhookResponse> {
  const res = await cp.request("/v1/webhooks", { method: "POST", json: { secret: SECRET, events: ["state_change"], ...body } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as WebhookResponse;
}

async function createLine(cp: Api, name: string): Promise<string> {
  const res = await cp.request("/v1/lines", {
    method: "POST",
    json: {
      name,
      tier: "paid",
      protocol: "openai-chat",
      model: "m",
      baseUrl: "http://127.0.0.1:9/v1",
      routes: [{ route: "chat", weight: 1 }],
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const id = ((await res.json()) as { id: string }).id;
  // A line's health record is made at its first event, in the admin state it then has: only from
  // the second flip on is each change an event.
  await flip(cp, id);
  return id;
}

const lastEventId = async (cp: Api) =>
  ((await (await cp.request("/v1/events?limit=1")).json()) as { events: EventView[] }).events[0]?.id ?? 0;

/** Drain and re-enable: two state_change events, in that order. */
async function flip(cp: Api, lineId: string): Promise<void> {
  for (const adminState of ["drained", "active"]) {
    const res = await cp.request(`/v1/lines/${lineId}`, { method: "PATCH", json: { adminState } });
    expect(res.status, await res.clone().text()).toBe(200);
  }
}

/** State changes after event `after`, oldest first. */
async function stateChanges(cp: Api, after: number): Promise<EventView[]> {
  const page = (await (await cp.request("/v1/events?kind=state_change&limit=500")).json()) as { events: EventView[] };
  return page.events.filter((e) => e.id > after).reverse();
}

const sinkOf = async (cp: Api, id: string) => (await (await cp.request(`/v1/webhooks/${id}`)).json()) as WebhookResponse;

/** Every event of `lines` arrived 2xx exactly once, in order per line. */
function expectDeliveredInOrder(r: WebhookReceiver, events: EventView[]): WebhookBody[] {
  const got = r.delivered().map((d) => d.json as unknown as WebhookBody);
  expect(got.map((b) => b.event.id).sort((a, b) => a - b)).toEqual(events.map((e) => e.id).sort((a, b) => a - b));
  expect(new Set(got.map((b) => b.id)).size).toBe(got.length);
  for (const lineId of new Set(events.map((e) => e.lineId))) {
    expect(got.filter((b) => b.event.lineId === lineId).map((b) => b.event.id)).toEqual(
      events.filter((e) => e.lineId === lineId).map((e) => e.id),
    );
  }
  return got;
}

describe("in real time, in process", () => {
  let cp: TestControlPlane;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    cp = await startTestControlPlane({
      env: { LINEWATCH_SCHEDULER: "true", LINEWATCH_SHIPPED_SAMPLES: "false", LINEWATCH_WEBHOOK_RETRY_WINDOW_SEC: "600" },
    });
    await createRoute(cp, "chat");
  }, 60_000);
  afterAll(async () => {
    // Receivers first: a delivery a receiver holds ends with it, so stopping does not wait for its timeout.
    for (const r of receivers) await r.close();
    await cp?.stop();
    await cp?.testDb.dispose();
  }, 120_000);

  it("a receiver answering 500 for 30 s, then 200, gets every event afterwards, in order per line, no doubles beyond the retries", async () => {
    let up = false;
    const r = await startWebhookReceiver(() => (up ? 200 : 500));
    receivers.push(r);
    const lines = [await createLine(cp, "flaky-a"), await createLine(cp, "flaky-b")];
    const from = await lastEventId(cp);
    const sink = await createSink(cp, { name: "flaky", url: r.url });
    const downFrom = Date.now();
    // Events keep coming while it is down: three flips of each line over the first 20 s.
    for (let round = 0; round < 3; round++) {
      for (const id of lines) await flip(cp, id);
      await new Promise((resolve) => setTimeout(resolve, 7_000));
    }
    await eventually(async () => Date.now() - downFrom >= 30_000, 40_000, 500);
    up = true;
    const upAt = Date.now();
    const events = (await stateChanges(cp, from)).filter((e) => lines.includes(e.lineId ?? ""));
    expect(events).toHaveLength(12);
    await eventually(async () => (await sinkOf(cp, sink.id)).delivery.pending === 0 && r.delivered().length === 12, 120_000, 500);

    expectDeliveredInOrder(r, events);
    // Each delivery was sent once per 500 it got, and once more: no other doubles.
    const byId = new Map<string, { failed: number; ok: number }>();
    for (const x of r.received) {
      const id = x.headers["x-linewatch-delivery"] ?? "";
      const n = byId.get(id) ?? { failed: 0, ok: 0 };
      if (x.status === 200) n.ok++;
      else n.failed++;
      byId.set(id, n);
    }
    expect([...byId.values()].every((n) => n.ok === 1)).toBe(true);
    expect(r.received.filter((x) => x.status === 500).every((x) => x.at < upAt + 1_000)).toBe(true);
    // While down only each line's oldest event was tried: the others waited in order.
    const heads = new Set(lines.map((id) => `${events.find((e) => e.lineId === id)?.id}-${sink.id}`));
    expect(r.received.filter((x) => x.status === 500).every((x) => heads.has(x.headers["x-linewatch-delivery"] ?? ""))).toBe(true);
    const failedAttempts = r.received.filter((x) => x.status === 500).length;
    expect(failedAttempts).toBeGreaterThanOrEqual(2 * 4); // 1, 2, 4, 8 s … (half to all) within 30 s
    expect((await sinkOf(cp, sink.id)).delivery).toMatchObject({ delivered: 12, failedAttempts, deadLetters: 0, pending: 0 });
    console.info(
      `webhooks: receiver down 30 s: ${failedAttempts} failed attempts; all 12 events delivered ${((r.delivered().length && Math.max(...r.received.filter((x) => x.status === 200).map((x) => x.at))) - upAt) / 1000} s after it came back`,
    );
    await cp.request(`/v1/webhooks/${sink.id}`, { method: "DELETE" });
  }, 180_000);

  it("a dead receiver is counted as a dead letter after the retry window", async () => {
    // A window of 8 s on a control plane of its own; the receiver's port refuses connections.
    const short = await startTestControlPlane({
      env: { LINEWATCH_SCHEDULER: "true", LINEWATCH_SHIPPED_SAMPLES: "false", LINEWATCH_WEBHOOK_RETRY_WINDOW_SEC: "8" },
    });
    try {
      await createRoute(short, "chat");
      const line = await createLine(short, "dead-a");
      const sink = await createSink(short, { name: "dead", url: "http://127.0.0.1:9/hook" });
      const started = Date.now();
      await flip(short, line);
      const dead = await eventually(
        async () => {
          const s = await sinkOf(short, sink.id);
          return s.delivery.deadLetters === 2 ? s : undefined;
        },
        60_000,
        250,
      );
      const tookMs = Date.now() - started;
      expect(tookMs).toBeGreaterThanOrEqual(8_000);
      expect(dead.delivery).toMatchObject({ pending: 0, delivered: 0 });
      expect(dead.delivery.failedAttempts).toBeGreaterThanOrEqual(3);
      expect(dead.delivery.lastError?.message).toMatch(/ECONNREFUSED/);
      const metrics = await (await short.request("/metrics")).text();
      expect(metrics).toContain('linewatch_webhook_deliveries_total{webhook="dead",outcome="dead_letter"} 2');
    } finally {
      await short.stop();
      await short.testDb.dispose();
    }
  }, 120_000);
});

describe("replicas on PostgreSQL", () => {
  let database: { url: string; dispose(): Promise<void> };
  let db: ReturnType<typeof inspect>;
  const processes: ControlPlaneProcess[] = [];
  const receivers: WebhookReceiver[] = [];
  const secretKey = "c".repeat(64);
  const start = async (replicaId: string) => {
    const p = await startControlPlaneProcess({
      databaseUrl: database.url,
      replicaId,
      secretKey,
      // An attempt outlives the test's waits: only the heartbeats can hand a killed replica's claim over.
      env: { LINEWATCH_SHIPPED_SAMPLES: "false", LOG_LEVEL: "warn", LINEWATCH_WEBHOOK_TIMEOUT_MS: "120000" },
    });
    processes.push(p);
    return p;
  };

  beforeAll(async () => {
    database = await faultDatabase();
    db = inspect(database.url);
  }, 120_000);
  afterAll(async () => {
    // Receivers first (see above); a process that still does not stop in time is killed, never left behind.
    for (const r of receivers) await r.close();
    for (const p of processes) await p.stop().catch(() => p.kill9());
    await db?.close();
    await database?.dispose();
  }, 180_000);

  it("two replicas deliver each event once", async () => {
    const a = await start("hooks-a");
    const b = await start("hooks-b");
    // A receiver that takes 100 ms per answer: both replicas' slots are busy at once.
    const r = await startWebhookReceiver(() => ({ status: 200, delayMs: 100 }));
    receivers.push(r);
    await createRoute(a, "chat");
    const lines: string[] = [];
    for (let i = 0; i < 8; i++) lines.push(await createLine(i % 2 ? b : a, `two-${i}`));
    const from = await lastEventId(a);
    const sink = await createSink(a, { name: "both", url: r.url });
    // Each replica records half the events: 8 lines × 3 flips × 2 = 48.
    for (let round = 0; round < 3; round++) for (const [i, id] of lines.entries()) await flip(i % 2 ? a : b, id);
    const events = (await stateChanges(a, from)).filter((e) => lines.includes(e.lineId ?? ""));
    expect(events).toHaveLength(48);
    await eventually(async () => r.delivered().length >= 48 && (await sinkOf(b, sink.id)).delivery.pending === 0, 60_000);
    // A moment more: a double would arrive now.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expectDeliveredInOrder(r, events);
    expect(r.received).toHaveLength(48);
    const by = await db.sql<{ claimed_by: string; n: number }[]>`
      select claimed_by, count(*)::int as n from webhook_deliveries where status = 'delivered' group by claimed_by order by claimed_by`;
    expect(by.map((x) => x.claimed_by)).toEqual(["hooks-a", "hooks-b"]);
    console.info(`webhooks: two replicas delivered ${by.map((x) => `${x.claimed_by} ${x.n}`).join(", ")}`);
    expect((await sinkOf(a, sink.id)).delivery).toMatchObject({ delivered: 48, failedAttempts: 0, deadLetters: 0 });
    await a.request(`/v1/webhooks/${sink.id}`, { method: "DELETE" });
    await a.stop();
    await b.stop();
  }, 180_000);

  it("kill -9 during a delivery loses nothing: the other replica takes the claim over", async () => {
    const a = await start("kill-a");
    let holding = true;
    const r = await startWebhookReceiver(() => (holding ? "hang" : 200));
    receivers.push(r);
    const line = await createLine(a, "killed-a");
    const from = await lastEventId(a);
    const sink = await createSink(a, { name: "killed", url: r.url });
    await flip(a, line);
    // A's delivery of the first event is in the receiver's hands, unanswered.
    await eventually(async () => r.received.length >= 1, 20_000);
    const first = r.received[0]?.headers["x-linewatch-delivery"];
    const b = await start("kill-b");
    holding = false;
    await a.kill9();
    // B finds A dead by its heartbeat (10 s) and sends what A held, then the next event in order.
    const events = (await stateChanges(b, from)).filter((e) => e.lineId === line);
    expect(events).toHaveLength(2);
    await eventually(async () => r.delivered().length >= 2, 60_000);
    const got = expectDeliveredInOrder(r, events);
    expect(got[0]?.id).toBe(first);
    // The one A held was sent twice (at least once); nothing else was.
    expect(r.received.map((x) => x.headers["x-linewatch-delivery"])).toEqual([first, first, got[1]?.id]);
    const rows = await db.sql<{ event_id: string; status: string; attempts: number; claimed_by: string }[]>`
      select event_id::text, status, attempts, claimed_by from webhook_deliveries where webhook_id = ${sink.id} order by event_id`;
    expect(rows.map((x) => [x.status, x.claimed_by])).toEqual([
      ["delivered", "kill-b"],
      ["delivered", "kill-b"],
    ]);
    expect(rows[0]?.attempts).toBe(2);
    expect((await sinkOf(b, sink.id)).delivery).toMatchObject({ delivered: 2, deadLetters: 0, pending: 0 });
  }, 180_000);
});
