// Webhook sinks (issue 26, docs/alerts.md#webhooks) against real receivers on 127.0.0.1: events
// signed and delivered once each, in order per line, retried with backoff and dead-lettered after the
// window (time driven through the injected clock), a hung receiver that holds up neither the health
// machine nor the other sinks, and bad input refused naming the field. Real-time and process-level
// cases (a receiver down for 30 s, two replicas, kill -9) are in test/faults/webhooks.test.ts.
import type { WebhookBody, WebhookResponse } from "@linewatch/contract";
import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PER_SINK_SLOTS } from "../../../apps/control-plane/src/webhooks/delivery-worker";
import { verifyWebhook, WEBHOOK_HEADERS } from "../../../apps/control-plane/src/webhooks/signature";
import { createLine, createRoute, eventually, probeNow } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { ManualClock } from "../../helpers/manual-clock";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver";

const SECRET = "whsec-test-0123456789abcdef";
const WINDOW_SEC = 600;
const clock = new ManualClock();
let cp: TestControlPlane;
let lab: Lab;
let paid: { id: string; name: string };
let free: { id: string; name: string };
const receivers: WebhookReceiver[] = [];

interface EventView {
  id: number;
  kind: string;
  lineId: string | null;
  route: string | null;
  reason: string;
  data: Record<string, unknown>;
}

async function receiver(...args: Parameters<typeof startWebhookReceiver>): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(...args);
  receivers.push(r);
  return r;
}

async function createSink(body: Record<string, unknown>): Promise<WebhookResponse> {
  const res = await cp.request("/v1/webhooks", { method: "POST", json: { secret: SECRET, ...body } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as WebhookResponse;
}

const sink = async (id: string) => (await (await cp.request(`/v1/webhooks/${id}`)).json()) as WebhookResponse;
const state = async (id: string) => ((await (await cp.request(`/v1/lines/${id}/health`)).json()) as { state: string }).state;

/** Events recorded after `afterId`, oldest first. */
async function eventsAfter(afterId: number): Promise<EventView[]> {
  const page = (await (await cp.request("/v1/events?limit=500")).json()) as { events: EventView[] };
  return page.events.filter((e) => e.id > afterId).reverse();
}
const lastEventId = async () => ((await (await cp.request("/v1/events?limit=1")).json()) as { events: EventView[] }).events[0]?.id ?? 0;

/** The webhook worker's ticks until nothing it can send now is left (each waits for its sends). */
async function deliver(): Promise<void> {
  for (let i = 0; i < 20; i++) if ((await cp.engine.webhooks.runOnce()) === 0) return;
  throw new Error("the webhook worker kept finding work");
}

async function toCooldown(line: { id: string; name: string }): Promise<void> {
  lab.setMode(line.name, "errors", { status: 502 });
  for (let i = 0; i < 12 && (await state(line.id)) !== "cooldown"; i++) {
    await probeNow(cp, line.id);
    clock.advance(5_000);
  }
  expect(await state(line.id)).toBe("cooldown");
}

async function backToHealthy(line: { id: string; name: string }): Promise<void> {
  lab.setMode(line.name, "ok");
  for (let i = 0; i < 12 && (await state(line.id)) !== "healthy"; i++) {
    clock.advance(6 * 60_000);
    await cp.engine.health.runTicks();
    await probeNow(cp, line.id);
  }
  expect(await state(line.id)).toBe("healthy");
}

/** Each delivered body is signed with the sink's secret over its timestamp, which is the clock's. */
function expectSigned(r: WebhookReceiver): void {
  for (const got of r.received) {
    const ts = Number(got.headers[WEBHOOK_HEADERS.timestamp]);
    expect(Math.abs(ts - clock.now() / 1000)).toBeLessThan(3600);
    expect(
      verifyWebhook(
        SECRET,
        { signature: got.headers[WEBHOOK_HEADERS.signature], timestamp: got.headers[WEBHOOK_HEADERS.timestamp] },
        got.body,
        ts,
      ),
    ).toEqual({ ok: true });
    // Any other secret, body or timestamp does not verify.
    const headers = { signature: got.headers[WEBHOOK_HEADERS.signature], timestamp: got.headers[WEBHOOK_HEADERS.timestamp] };
    expect(verifyWebhook(`${SECRET}x`, headers, got.body, ts).ok).toBe(false);
    expect(verifyWebhook(SECRET, headers, `${got.body} `, ts).ok).toBe(false);
    expect(verifyWebhook(SECRET, { ...headers, timestamp: String(ts + 1) }, got.body, ts).ok).toBe(false);
    expect(verifyWebhook(SECRET, headers, got.body, ts + 301)).toEqual({ ok: false, why: "timestamp out of tolerance" });
  }
}

beforeAll(async () => {
  lab = await startLab({
    lines: [
      { name: "paid-a", baseLatencyMs: 2 },
      { name: "free-a", baseLatencyMs: 2 },
    ],
  });
  cp = await startTestControlPlane({
    clock,
    env: {
      LINEWATCH_SHIPPED_SAMPLES: "false",
      LINEWATCH_WEBHOOK_RETRY_WINDOW_SEC: String(WINDOW_SEC),
      LINEWATCH_WEBHOOK_TIMEOUT_MS: "60000",
    },
  });
  await createRoute(cp, "chat");
  await createRoute(cp, "other");
  const res = await cp.request("/v1/samples", {
    method: "POST",
    json: {
      name: "hello",
      protocol: "openai-chat",
      routes: ["chat"],
      request: { messages: [{ role: "user", content: "hi" }] },
      expect: { minLength: 1 },
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  paid = await createLine(cp, { name: "paid-a", baseUrl: lab.baseUrl("paid-a"), routes: [{ route: "chat", weight: 100 }] });
  free = await createLine(cp, { name: "free-a", tier: "free", baseUrl: lab.baseUrl("free-a"), routes: [{ route: "chat", weight: 100 }] });
  for (let i = 0; i < 3; i++) for (const l of [paid, free]) await probeNow(cp, l.id);
  // What happened before any sink existed is never sent.
  await deliver();
}, 60_000);

afterAll(async () => {
  for (const r of receivers) await r.close();
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("a line that goes to cooldown and back", () => {
  it("sends each of its events once, signed, in order, to the sinks that want them", async () => {
    const all = await receiver();
    const modes = await receiver();
    const elsewhere = await receiver();
    const everything = await createSink({ name: "all", url: all.url });
    await createSink({ name: "modes", url: modes.url, format: "slack", events: ["table_mode"], routes: ["chat"] });
    await createSink({ name: "elsewhere", url: elsewhere.url, routes: ["other"] });
    const from = await lastEventId();

    await toCooldown(paid);
    await deliver();
    await backToHealthy(paid);
    await deliver();

    const happened = await eventsAfter(from);
    const stateChanges = happened.filter((e) => e.kind === "state_change" && e.lineId === paid.id);
    expect(stateChanges.map((e) => e.data.to)).toEqual(expect.arrayContaining(["cooldown", "probation", "healthy"]));
    // Without a paid line the route ran degraded, then normal again.
    const modeChanges = happened.filter((e) => e.kind === "table_published" && e.data.mode !== e.data.previousMode);
    expect(modeChanges.map((e) => `${e.data.previousMode}→${e.data.mode}`)).toEqual(["normal→degraded", "degraded→normal"]);

    // The generic sink: every state change and the mode changes (and nothing else), each once, in order.
    const wanted = happened.filter((e) => ["state_change", "trend_alert", "live_evidence"].includes(e.kind) || modeChanges.includes(e));
    const bodies = all.delivered().map((d) => d.json as unknown as WebhookBody);
    expect(bodies.map((b) => b.event.id).sort((a, b) => a - b)).toEqual(wanted.map((e) => e.id));
    // In order per line and per route (the line's and the route's events are independent of each other).
    const keyOf = (e: { lineId: string | null; route: string | null }) => e.lineId ?? `route:${e.route}`;
    for (const key of new Set(wanted.map(keyOf))) {
      expect(bodies.filter((b) => keyOf(b.event) === key).map((b) => b.event.id)).toEqual(
        wanted.filter((e) => keyOf(e) === key).map((e) => e.id),
      );
    }
    expect(all.received).toHaveLength(bodies.length);
    expect(new Set(bodies.map((b) => b.id)).size).toBe(bodies.length);
    for (const got of all.delivered()) {
      const body = got.json as unknown as WebhookBody;
      const event = wanted.find((e) => e.id === body.event.id);
      expect(body.id).toBe(`${body.event.id}-${everything.id}`);
      expect(got.headers[WEBHOOK_HEADERS.delivery]).toBe(body.id);
      expect(got.headers[WEBHOOK_HEADERS.event]).toBe(body.kinds[0]);
      expect(got.headers["content-type"]).toBe("application/json");
      expect(body.event).toMatchObject({ kind: event?.kind, reason: event?.reason, data: event?.data });
      if (body.event.kind === "table_published") expect(body).toMatchObject({ kinds: ["table_mode"], line: null, routes: ["chat"] });
      else expect(body).toMatchObject({ kinds: [body.event.kind], line: "paid-a", routes: ["chat"] });
    }
    expect(bodies.find((b) => b.event.data.to === "cooldown")?.summary).toMatch(
      /^line paid-a: (healthy|degraded) → cooldown \(failure_evidence: /,
    );
    expectSigned(all);

    // The Slack sink: the two mode changes as Slack text.
    const texts = modes.delivered().map((d) => d.json);
    expect(texts).toEqual([
      { text: expect.stringMatching(/^:large_yellow_circle: \*linewatch\* route `chat`: table mode normal → degraded/) },
      { text: expect.stringMatching(/^:large_green_circle: \*linewatch\* route `chat`: table mode degraded → normal/) },
    ]);
    expectSigned(modes);
    // A sink filtered to another route hears nothing of these.
    expect(elsewhere.received).toEqual([]);

    const stats = await sink(everything.id);
    expect(stats.delivery).toMatchObject({ pending: 0, delivered: bodies.length, failedAttempts: 0, deadLetters: 0, lastError: null });
    expect(stats.delivery.lastDeliveredAt).toBe(new Date(clock.now()).toISOString());
    // Fanned out once: another pass sends nothing again.
    await deliver();
    expect(all.received).toHaveLength(bodies.length);
    for (const name of ["all", "modes", "elsewhere"]) {
      const s = (await (await cp.request("/v1/webhooks")).json()) as { webhooks: WebhookResponse[] };
      await cp.request(`/v1/webhooks/${s.webhooks.find((w) => w.name === name)?.id}`, { method: "DELETE" });
    }
  });
});

describe("a receiver that fails", () => {
  it("is retried with backoff, every line's events wait in order, and it gets each once when it is back", async () => {
    const r = await receiver(() => 500);
    const s = await createSink({ name: "flaky", url: r.url, events: ["state_change"] });
    const from = await lastEventId();
    // Three admin changes of each line: six state changes per line, in a known order.
    for (let i = 0; i < 3; i++) {
      for (const line of [paid, free]) {
        for (const adminState of ["drained", "active"]) {
          const res = await cp.request(`/v1/lines/${line.id}`, { method: "PATCH", json: { adminState } });
          expect(res.status).toBe(200);
          clock.advance(1_000);
        }
      }
    }
    const expected = (await eventsAfter(from)).filter((e) => e.kind === "state_change");
    expect(expected).toHaveLength(12);

    // Down: only the oldest event of each line is tried, once per backoff step.
    await deliver();
    expect(r.received.map((x) => (JSON.parse(x.body) as WebhookBody).event.data.line).sort()).toEqual(["free-a", "paid-a"]);
    await deliver(); // nothing is due before its backoff
    expect(r.received).toHaveLength(2);
    const down = await sink(s.id);
    expect(down.delivery).toMatchObject({ pending: 12, delivered: 0, failedAttempts: 2, deadLetters: 0 });
    expect(down.delivery.lastError?.message).toBe("HTTP 500: receiver says 500");
    expect(down.delivery.oldestPendingAt).toBe(new Date(await eventAt(expected[0]?.id ?? 0)).toISOString());
    for (let step = 0; step < 5; step++) {
      clock.advance(40_000);
      await deliver();
    }
    const heads = new Set(expected.filter((e, i) => expected.findIndex((x) => x.lineId === e.lineId) === i).map((e) => e.id));
    expect(r.received.every((x) => heads.has((JSON.parse(x.body) as WebhookBody).event.id))).toBe(true);
    const triedWhileDown = r.received.length;
    expect(triedWhileDown).toBeGreaterThanOrEqual(6);

    // Back: every event arrives, in order per line, each 2xx once.
    r.respond(() => 200);
    clock.advance(5 * 60_000);
    await deliver();
    const got = r.delivered().map((d) => d.json as unknown as WebhookBody);
    expect(got).toHaveLength(12);
    for (const line of ["paid-a", "free-a"]) {
      expect(got.filter((b) => b.line === line).map((b) => b.event.id)).toEqual(
        expected.filter((e) => e.data.line === line).map((e) => e.id),
      );
    }
    expect(new Set(got.map((b) => b.id)).size).toBe(12);
    // No doubles beyond the retries the 500s caused: one request per 500 and one per delivery.
    expect(r.received).toHaveLength(triedWhileDown + 12);
    const after = await sink(s.id);
    expect(after.delivery).toMatchObject({
      pending: 0,
      delivered: 12,
      failedAttempts: triedWhileDown,
      deadLetters: 0,
      oldestPendingAt: null,
    });
    expectSigned(r);
    await cp.request(`/v1/webhooks/${s.id}`, { method: "DELETE" });
  });

  it("is counted as a dead letter once the retry window is over, with its last error, in the API and the metrics", async () => {
    const r = await receiver(() => 503);
    const s = await createSink({ name: "dead", url: r.url, events: ["state_change"] });
    await cp.request(`/v1/lines/${free.id}`, { method: "PATCH", json: { adminState: "drained" } });
    await deliver();
    expect(r.received).toHaveLength(1);
    // Retried through the window, never faster than the backoff, then given up.
    let attempts = 1;
    for (let t = 0; t <= WINDOW_SEC + 300; t += 30) {
      clock.advance(30_000);
      await deliver();
      expect(r.received.length).toBeLessThanOrEqual(attempts + 1);
      attempts = r.received.length;
    }
    const dead = await sink(s.id);
    expect(dead.delivery).toMatchObject({ pending: 0, delivered: 0, deadLetters: 1, failedAttempts: r.received.length - 1 });
    expect(dead.delivery.lastError?.message).toBe("HTTP 503: receiver says 503");
    // 1, 2, 4, … s (half to all of each), capped at 5 min, over 10 min: more than 5 attempts, fewer than 20.
    expect(r.received.length).toBeGreaterThan(5);
    expect(r.received.length).toBeLessThan(20);
    const n = r.received.length;
    clock.advance(3_600_000);
    await deliver();
    expect(r.received).toHaveLength(n);
    const metrics = await (await cp.request("/metrics")).text();
    expect(metrics).toContain('linewatch_webhook_deliveries_total{webhook="dead",outcome="dead_letter"} 1');
    expect(metrics).toContain(`linewatch_webhook_deliveries_total{webhook="dead",outcome="failed"} ${n - 1}`);
    expect(metrics).toContain('linewatch_webhook_deliveries_total{webhook="dead",outcome="delivered"} 0');
    expect(metrics).toContain('linewatch_webhook_queue_depth{webhook="dead"} 0');
    expect(metrics).toContain('linewatch_webhook_oldest_undelivered_age_seconds{webhook="dead"} 0');
    expect(metrics).toMatch(/^linewatch_webhook_outbox_events 0$/m);
    expect(metrics).toMatch(/^linewatch_webhook_outbox_oldest_age_seconds 0$/m);
    // The dashboard's webhooks page: the dead letter and the last error, the endpoint without its path.
    const page = await (await cp.request("/webhooks")).text();
    expect(page).toMatch(/<title>\(1\) webhooks · linewatch<\/title>/);
    expect(page).toMatch(/<tr data-webhook="dead">[\s\S]*?data-dead-letters="1"[\s\S]*?HTTP 503: receiver says 503/);
    expect(page).toContain(new URL(r.url).origin);
    expect(page).not.toContain(r.url);
    await cp.request(`/v1/lines/${free.id}`, { method: "PATCH", json: { adminState: "active" } });
    await cp.request(`/v1/webhooks/${s.id}`, { method: "DELETE" });
    await deliver();
  });
});

/** When an event happened (ms), from the timeline. */
async function eventAt(id: number): Promise<number> {
  const page = (await (await cp.request("/v1/events?limit=500")).json()) as { events: (EventView & { at: string })[] };
  const e = page.events.find((x) => x.id === id);
  if (!e) throw new Error(`no event ${id}`);
  return Date.parse(e.at);
}

describe("a receiver that hangs", () => {
  it("holds neither the next probe's state change nor the other sinks", async () => {
    const hung = await receiver(() => "hang");
    const fine = await receiver();
    const hungSink = await createSink({ name: "hung", url: hung.url, events: ["state_change"] });
    await createSink({ name: "fine", url: fine.url, events: ["state_change"] });
    // One event, and its delivery to the hung receiver under way (a tick only starts sends).
    await cp.request(`/v1/lines/${free.id}`, { method: "PATCH", json: { adminState: "drained" } });
    await cp.engine.webhooks.tick();
    await eventually(async () => hung.received.length === 1);
    expect(cp.engine.webhooks.sending).toBeGreaterThanOrEqual(1);

    // The next probes take the paid line to cooldown while that delivery hangs.
    const started = performance.now();
    await toCooldown(paid);
    const tookMs = performance.now() - started;
    expect(hung.received[0]?.status).toBeNull(); // still unanswered: the state change did not wait for it
    expect(cp.engine.webhooks.sending).toBeGreaterThanOrEqual(1);
    await cp.engine.webhooks.tick();
    // The other sink got both events meanwhile; the hung one holds at most its two slots.
    await eventually(async () => fine.delivered().some((d) => (d.json as unknown as WebhookBody).event.data.to === "cooldown"));
    const toStates = fine.delivered().map((d) => (d.json as unknown as WebhookBody).event.data.to);
    expect(toStates[0]).toBe("drained");
    expect(toStates.at(-1)).toBe("cooldown");
    // (Per sink: the fine sink's last delivery may still be recording its outcome.)
    expect(cp.engine.webhooks.sendingTo(hungSink.id)).toBeGreaterThanOrEqual(1);
    expect(cp.engine.webhooks.sendingTo(hungSink.id)).toBeLessThanOrEqual(PER_SINK_SLOTS);
    console.info(`webhooks: a line went to cooldown in ${tookMs.toFixed(0)} ms of probes while a receiver hung`);

    // Its socket ends: the attempt fails, is counted, and waits for its backoff.
    await hung.close();
    await cp.engine.webhooks.drain();
    const all = (await (await cp.request("/v1/webhooks")).json()) as { webhooks: WebhookResponse[] };
    const held = all.webhooks.find((w) => w.name === "hung")?.delivery;
    expect(held?.failedAttempts).toBeGreaterThanOrEqual(1);
    expect(held?.pending).toBeGreaterThanOrEqual(2);
    expect(held?.lastError?.message).toMatch(/socket|closed|ECONNRESET|terminated/i);
    for (const w of all.webhooks) await cp.request(`/v1/webhooks/${w.id}`, { method: "DELETE" });
    await cp.request(`/v1/lines/${free.id}`, { method: "PATCH", json: { adminState: "active" } });
    await backToHealthy(paid);
  });
});

describe("the webhooks API", () => {
  it("refuses a metadata or link-local URL, a bad format, a missing or short secret and unknown kinds, naming the field", async () => {
    const bad = async (body: Record<string, unknown>, field: string, status = 400) => {
      const res = await cp.request("/v1/webhooks", {
        method: "POST",
        json: { name: "bad", url: "http://127.0.0.1:9/hook", secret: SECRET, ...body },
      });
      const text = await res.text();
      expect(res.status, text).toBe(status);
      const err = JSON.parse(text) as { error: { code: string; details: { field?: string }[] } };
      expect(
        err.error.details.map((d) => d.field),
        text,
      ).toContain(field);
    };
    for (const url of [
      "http://169.254.169.254/latest/meta-data",
      "http://169.254.10.1/hook",
      "http://metadata.google.internal/hook",
      "http://[::ffff:169.254.169.254]/hook",
      "http://[fe80::1]/hook",
      "https://user:pass@example.com/hook",
      "ftp://example.com/hook",
      "not a url",
    ]) {
      await bad({ url }, "url");
    }
    await bad({ format: "xml" }, "format");
    await bad({ secret: undefined }, "secret");
    await bad({ secret: "short" }, "secret");
    await bad({ events: ["state_change", "nope"] }, "events.1");
    await bad({ events: [] }, "events");
    await bad({ routes: ["no-such-route"] }, "routes.0", 404);
    await bad({ extra: 1 }, "extra");
    await bad({ name: "no spaces" }, "name");
    const res = await cp.request("/v1/webhooks", { method: "POST", json: { name: "ok", url: "http://127.0.0.1:9/hook", secret: SECRET } });
    expect(res.status).toBe(201);
    const created = (await res.json()) as WebhookResponse;
    const patch = await cp.request(`/v1/webhooks/${created.id}`, { method: "PATCH", json: { url: "http://169.254.169.254/" } });
    expect(patch.status).toBe(400);
    expect(
      (await cp.request("/v1/webhooks", { method: "POST", json: { name: "ok", url: "http://127.0.0.1:9/x", secret: SECRET } })).status,
    ).toBe(409);
    await cp.request(`/v1/webhooks/${created.id}`, { method: "DELETE" });
  });

  it("lists, changes and deletes sinks, never returning the secret; a test delivery is signed with the new one", async () => {
    const r = await receiver();
    const created = await createSink({ name: "crud", url: r.url, events: ["trend_alert", "fail_safe"], routes: ["chat"] });
    expect(created).toMatchObject({
      name: "crud",
      events: ["trend_alert", "fail_safe"],
      routes: ["chat"],
      format: "json",
      hasSecret: true,
    });
    const rotated = `${SECRET}-2`;
    const changed = await cp.request(`/v1/webhooks/${created.id}`, {
      method: "PATCH",
      json: { format: "slack", secret: rotated, routes: [] },
    });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ format: "slack", routes: [], events: ["trend_alert", "fail_safe"] });
    const listed = await (await cp.request("/v1/webhooks")).text();
    expect(listed).not.toContain(SECRET);
    expect(listed).toContain('"hasSecret":true');
    // What a receiver is sent is described for it in /openapi.json.
    const doc = (await (await cp.request("/openapi.json")).json()) as { components: { schemas: Record<string, { properties?: object }> } };
    expect(Object.keys(doc.components.schemas.WebhookBody?.properties ?? {})).toEqual([
      "id",
      "kinds",
      "summary",
      "line",
      "routes",
      "event",
    ]);
    const test = await cp.request(`/v1/webhooks/${created.id}/test`, { method: "POST" });
    expect(await test.json()).toMatchObject({ ok: true, status: 200, error: null });
    const got = r.received[0];
    expect(got?.headers[WEBHOOK_HEADERS.event]).toBe("test");
    const ts = Number(got?.headers[WEBHOOK_HEADERS.timestamp]);
    expect(
      verifyWebhook(
        rotated,
        { signature: got?.headers[WEBHOOK_HEADERS.signature], timestamp: got?.headers[WEBHOOK_HEADERS.timestamp] },
        got?.body ?? "",
        ts,
      ),
    ).toEqual({ ok: true });
    expect(JSON.parse(got?.body ?? "{}")).toEqual({ text: expect.stringMatching(/a test delivery to webhook crud/) });
    expect((await cp.request(`/v1/webhooks/${created.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await cp.request(`/v1/webhooks/${created.id}`)).status).toBe(404);
    expect((await cp.request("/v1/webhooks/not-a-uuid", { method: "DELETE" })).status).toBe(404);
    // A receiver that is not there: the test says so, nothing is queued.
    const gone = await createSink({ name: "gone", url: "http://127.0.0.1:9/hook" });
    const failed = (await (await cp.request(`/v1/webhooks/${gone.id}/test`, { method: "POST" })).json()) as { ok: boolean; error: string };
    expect(failed.ok).toBe(false);
    expect(failed.error).toMatch(/ECONNREFUSED/);
    expect((await sink(gone.id)).delivery).toMatchObject({ pending: 0, failedAttempts: 0 });
    await cp.request(`/v1/webhooks/${gone.id}`, { method: "DELETE" });
  });
});
