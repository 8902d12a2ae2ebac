import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute, probeNow } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { ManualClock } from "../../helpers/manual-clock";
import { createTestDatabase } from "../../helpers/test-db";

// docs/health.md, docs/tables.md wired end to end: probe results move health, health moves tables, tables are versioned.
interface Table {
  route: string;
  version: number;
  mode: string;
  lines: { id: string; name: string; tier: string; state: string; weight: number; apiKey?: unknown }[];
}
interface Health {
  state: string;
  weightFactor: number;
  cooldown: { until: string; durationMs: number } | null;
  probation: { stage: number; factor: number } | null;
  holdUntil: string | null;
  consecutiveFailures: number;
  evidence: { hard: number; content: number; hardRate: number; contentRate: Record<string, number> };
  lengths: Record<string, { anchored: number | null; recent: number | null }>;
}
interface EventPage {
  events: { id: number; kind: string; lineId: string | null; route: string | null; reason: string; data: Record<string, unknown> }[];
  nextBefore: number | null;
}

let cp: TestControlPlane;
let lab: Lab;
const clock = new ManualClock();
const ids: Record<string, string> = {};

const table = async (): Promise<Table> => (await (await cp.request("/v1/tables/chat")).json()) as Table;
const health = async (name: string): Promise<Health> => (await (await cp.request(`/v1/lines/${ids[name]}/health`)).json()) as Health;
const events = async (query: string): Promise<EventPage> => (await (await cp.request(`/v1/events?${query}`)).json()) as EventPage;
const weightOf = (t: Table, name: string) => t.lines.find((l) => l.name === name)?.weight ?? 0;
const sum = (t: Table) => t.lines.reduce((a, l) => a + l.weight, 0);
/** One probe round with every sample on every line, a few seconds of virtual time apart. */
async function round(...names: string[]) {
  clock.advance(5_000);
  for (const n of names) await probeNow(cp, ids[n]!);
  await tick();
}
/** A scheduler tick, waiting for the scheduled probes it started (the virtual clock may have made many due). */
async function tick() {
  await cp.engine.tick();
  await cp.engine.prober.drain();
}

beforeAll(async () => {
  lab = await startLab({ lines: ["paid-a", "paid-b", "free-a", "free-b"].map((name) => ({ name, baseLatencyMs: 20 })) });
  cp = await startTestControlPlane({ clock, testDb: await createTestDatabase({ persistent: true }) });
  await createRoute(cp, "chat", { freeShareCap: 0.2 });
  for (const name of ["paid-a", "paid-b", "free-a", "free-b"]) {
    const line = await createLine(cp, {
      name,
      tier: name.startsWith("paid") ? "paid" : "free",
      baseUrl: lab.baseUrl(name),
      routes: [{ route: "chat", weight: 100 }],
    });
    ids[name] = line.id;
  }
  // The first round is the new lines' probation (docs/health.md#new-lines); four more in service.
  for (let i = 0; i < 5; i++) await round("paid-a", "paid-b", "free-a", "free-b");
}, 120_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("tables", () => {
  it("publishes a normal table: integer weights summing to 10000, free lines within their cap", async () => {
    const t = await table();
    expect(t.mode).toBe("normal");
    expect(sum(t)).toBe(10_000);
    expect(t.lines.every((l) => Number.isInteger(l.weight))).toBe(true);
    expect(weightOf(t, "free-a") + weightOf(t, "free-b")).toBeLessThanOrEqual(2_000);
    expect(weightOf(t, "paid-a")).toBe(4_000);
    expect(t.lines[0]).not.toHaveProperty("apiKey");
    const list = (await (await cp.request("/v1/tables")).json()) as { tables: Table[] };
    expect(list.tables.map((x) => x.route)).toEqual(["chat"]);
  });

  it("answers If-None-Match with 304 and the ETag, and a long-poll as soon as a new version is published", async () => {
    const first = await cp.request("/v1/tables/chat");
    const etag = first.headers.get("etag")!;
    const { version } = (await first.json()) as Table;
    expect(etag).toBe(`"${version}"`);
    const same = await cp.request("/v1/tables/chat", { headers: { "if-none-match": etag } });
    expect(same.status).toBe(304);
    expect(same.headers.get("etag")).toBe(etag);

    // A long-poll that nothing changes ends in 304 after waitSec.
    const t0 = Date.now();
    expect((await cp.request("/v1/tables/chat?waitSec=1", { headers: { "if-none-match": etag } })).status).toBe(304);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);

    // Draining a line publishes a new version: the waiting request answers with it, long before 30 s.
    const waiting = cp.request("/v1/tables/chat?waitSec=30", { headers: { "if-none-match": etag } });
    const started = Date.now();
    const patch = await cp.request(`/v1/lines/${ids["paid-b"]}`, { method: "PATCH", json: { adminState: "drained" } });
    expect(patch.status).toBe(200);
    const res = await waiting;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(res.status).toBe(200);
    const next = (await res.json()) as Table;
    expect(next.version).toBeGreaterThan(version);
    expect(res.headers.get("etag")).toBe(`"${next.version}"`);
    expect(weightOf(next, "paid-b")).toBe(0);
    expect(sum(next)).toBe(10_000);
    expect((await health("paid-b")).state).toBe("drained");

    // Re-enable: weight comes back; the version moves again. A drained line is still probed.
    const before = lab.stats("paid-b").requests;
    await round("paid-b");
    expect(lab.stats("paid-b").requests).toBeGreaterThan(before);
    await cp.request(`/v1/lines/${ids["paid-b"]}`, { method: "PATCH", json: { adminState: "active" } });
    const back = await table();
    expect(back.version).toBeGreaterThan(next.version);
    expect(weightOf(back, "paid-b")).toBeGreaterThan(0);
  });

  it("does not publish a new version when nothing changed", async () => {
    const { version } = await table();
    await round("paid-a", "paid-b", "free-b");
    await cp.engine.publisher.recompute(["chat"]);
    expect((await table()).version).toBe(version);
  });

  it("answers an unknown route with 404", async () => {
    expect((await cp.request("/v1/tables/nope")).status).toBe(404);
  });
});

describe("health state machine over real probes", () => {
  it("moves a truncating free line to cooldown (weight 0) after 2 failed probes, with events that name the probes", async () => {
    lab.setMode("free-a", "truncate", { fraction: 0.25 });
    await round("free-a");
    await round("free-a");
    const h = await health("free-a");
    expect(h.state).toBe("cooldown");
    expect(h.weightFactor).toBe(0);
    // 5 min at entry; each later failed probe during the cooldown doubles it (docs/health.md), capped at 1 h.
    expect(h.cooldown!.durationMs).toBeGreaterThanOrEqual(5 * 60_000);
    expect(h.cooldown!.durationMs).toBeLessThanOrEqual(60 * 60_000);
    const t = await table();
    expect(weightOf(t, "free-a")).toBe(0);
    expect(sum(t)).toBe(10_000);

    const page = await events(`line=free-a&kind=state_change`);
    const toCooldown = page.events.find((e) => e.data.to === "cooldown");
    expect(toCooldown?.reason).toMatch(/failure_evidence: content failures/);
    expect((toCooldown?.data.probeIds as string[] | undefined)?.length).toBeGreaterThanOrEqual(2);
    const published = await events(`route=chat&kind=table_published&limit=1`);
    expect(published.events[0]?.data.version).toBe(t.version);
  });

  it("keeps cooldown end, table version and events across a restart, without duplicates", async () => {
    const before = { health: await health("free-a"), table: await table(), events: await events("limit=500") };
    cp = await cp.restart();
    await cp.engine.health.runTicks();
    const after = { health: await health("free-a"), table: await table(), events: await events("limit=500") };
    expect(after.health.state).toBe("cooldown");
    expect(after.health.cooldown).toEqual(before.health.cooldown);
    expect(after.health.holdUntil).toEqual(before.health.holdUntil);
    // The evidence and the anchored lengths are part of health: stored, and read back whole.
    expect(after.health.evidence).toEqual(before.health.evidence);
    expect(after.health.lengths).toEqual(before.health.lengths);
    expect(Object.values(after.health.lengths).some((l) => l.anchored !== null)).toBe(true);
    expect(after.table.version).toBe(before.table.version);
    expect(after.events.events.map((e) => e.id)).toEqual(before.events.events.map((e) => e.id));
  });

  it("re-admits through probation after 3 consecutive passes, before the cooldown runs out", async () => {
    lab.setMode("free-a", "ok");
    await round("free-a");
    const h = await health("free-a");
    expect(h.state).toBe("probation");
    expect(h.probation).toEqual({ stage: 0, factor: 0.2 });
    // Anti-flap: the weight went down less than 3 min ago, so it is not raised yet...
    expect(weightOf(await table(), "free-a")).toBe(0);
    expect(Date.parse(h.holdUntil!)).toBeGreaterThan(clock.now());
    // ...and is once the hold is over.
    clock.set(Date.parse(h.holdUntil!) + 1_000);
    await cp.engine.health.runTicks();
    expect((await health("free-a")).weightFactor).toBe(0.2);
    expect(weightOf(await table(), "free-a")).toBeGreaterThan(0);
  });

  it("pages the timeline with a cursor", async () => {
    const first = await events("limit=2");
    expect(first.events.length).toBe(2);
    expect(first.nextBefore).not.toBeNull();
    const second = await events(`limit=2&before=${first.nextBefore}`);
    expect(second.events[0]!.id).toBeLessThan(first.events[1]!.id + 1);
    expect((await cp.request("/v1/events?kind=nonsense")).status).toBe(400);
  });
});
