import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mulberry32 } from "@linewatch/core";
import { createRouterClient, type RouterClient, type RouterClientOptions, silentLogger } from "@linewatch/router-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { line, startTableServer, type TableServer, waitFor } from "./table-server";

let server: TableServer;
let dir: string;
const clients: RouterClient[] = [];

beforeEach(async () => {
  server = await startTableServer({ routerToken: "rt-secret", viewerToken: "viewer" });
  dir = await mkdtemp(join(tmpdir(), "lw-router-client-"));
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

function client(overrides: Partial<RouterClientOptions> = {}): RouterClient {
  const c = createRouterClient({
    controlPlaneUrl: server.url,
    token: "rt-secret",
    routes: ["chat"],
    cacheFile: join(dir, "tables.json"),
    waitSec: 30,
    rng: mulberry32(1),
    logger: silentLogger,
    backoff: { initialMs: 20, maxMs: 200 },
    ...overrides,
  });
  clients.push(c);
  return c;
}

describe("pulling tables", () => {
  it("pulls the table with the router token: credentials, version, last pull time", async () => {
    server.publish("chat", [line("a", 7000), line("b", 3000, { headers: { "x-org": "o1" } })]);
    const before = Date.now();
    const c = client();
    await c.start();
    expect(c.version("chat")).toBe(1);
    expect(c.lastPullAt("chat")).toBeGreaterThanOrEqual(before);
    expect(c.ready()).toBe(true);
    expect(c.routes()).toEqual(["chat"]);
    const b = c.snapshot("chat")?.table.lines.find((l) => l.name === "b");
    expect(b?.apiKey).toBe("sk-b");
    expect(b?.headers).toEqual({ "x-org": "o1" });
    expect(server.requests[0]?.authorization).toBe("Bearer rt-secret");
    expect(c.status()).toEqual([
      expect.objectContaining({ route: "chat", version: 1, mode: "normal", lines: 2, source: "control-plane", consecutiveFailures: 0 }),
    ]);
  });

  it("long-polls with If-None-Match and waitSec, and sees a new version at once", async () => {
    server.publish("chat", [line("a", 10000)]);
    const c = client();
    await c.start();
    await waitFor(() => server.requests.some((r) => r.waitSec === 30), 2000, "a held poll");
    const held = server.requests.find((r) => r.waitSec === 30);
    expect(held?.ifNoneMatch).toBe('"1"');
    const t0 = Date.now();
    server.publish("chat", [line("a", 2000), line("b", 8000)]);
    await waitFor(() => c.version("chat") === 2, 2000, "version 2");
    // far sooner than the 30 s hold: the held request answered
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(c.snapshot("chat")?.picker.items.map((l) => l.name)).toEqual(["a", "b"]);
  });

  it("rebuilds the picker only when the version changes", async () => {
    server.publish("chat", [line("a", 5000), line("b", 5000)]);
    const c = client({ waitSec: 1, minPollIntervalMs: 0 });
    await c.start();
    const first = c.snapshot("chat");
    // A held poll that ends in 304 and a 200 that repeats the same version change nothing.
    const n = server.requests.length;
    await waitFor(() => server.requests.length >= n + 2, 4000, "two more polls");
    expect(c.snapshot("chat")).toBe(first);
    server.setTable({ ...(server.table("chat") as NonNullable<ReturnType<TableServer["table"]>>) });
    await waitFor(() => server.requests.length >= n + 3, 4000, "another poll");
    expect(c.snapshot("chat")).toBe(first);
    server.publish("chat", [line("a", 5000), line("b", 5000)]);
    await waitFor(() => c.version("chat") === 2, 3000, "version 2");
    expect(c.snapshot("chat")).not.toBe(first);
    expect(c.snapshot("chat")?.picker).not.toBe(first?.picker);
  });

  it("affinity keys stay on their line across a version change that keeps it; only a removed line's sessions move", async () => {
    server.publish("chat", [line("a", 5000), line("b", 3000), line("c", 2000)]);
    const c = client();
    await c.start();
    const keys = Array.from({ length: 2000 }, (_, i) => `session-${i}`);
    const before = new Map(keys.map((k) => [k, c.pick("chat", { affinityKey: k })?.name]));
    server.publish("chat", [line("a", 6250), line("b", 3750)]);
    await waitFor(() => c.version("chat") === 2, 2000, "version 2");
    const after = new Map(keys.map((k) => [k, c.pick("chat", { affinityKey: k })?.name]));
    for (const k of keys) {
      if (before.get(k) === "c") expect(after.get(k)).not.toBe("c");
      else expect(after.get(k)).toBe(before.get(k));
    }
    expect([...before.values()].filter((v) => v === "c").length).toBeGreaterThan(300);
  });

  it("without a router token the lines carry no credentials", async () => {
    server.publish("chat", [line("a", 10000)]);
    const c = client({ token: "viewer" });
    await c.start();
    expect(c.snapshot("chat")?.table.lines[0]?.apiKey).toBeUndefined();
  });

  it("a panic table is picked by its weights; an empty table picks null", async () => {
    server.publish("chat", [line("a", 9000, { tier: "free", state: "cooldown" }), line("b", 1000)], "panic");
    server.publish("closed", [], "panic");
    const c = client({ routes: ["chat", "closed"], rng: mulberry32(3) });
    await c.start();
    expect(c.snapshot("chat")?.mode).toBe("panic");
    const picks = Array.from({ length: 10_000 }, () => c.pick("chat")?.name);
    expect(Math.abs(picks.filter((n) => n === "a").length / 10_000 - 0.9)).toBeLessThan(0.02);
    expect(c.version("closed")).toBe(1);
    expect(c.pick("closed")).toBeNull();
    expect(c.pick("no-such-route")).toBeNull();
  });

  it("a route the control plane does not know is dropped from routes()", async () => {
    server.publish("chat", [line("a", 10000)]);
    const c = client({ routes: ["chat", "ghost"] });
    await c.start();
    expect(c.routes()).toEqual(["chat"]);
    expect(c.pick("ghost")).toBeNull();
    server.publish("ghost", [line("g", 10000)]);
    await waitFor(() => c.version("ghost") === 1, 3000, "ghost appears");
    expect(c.routes().sort()).toEqual(["chat", "ghost"]);
  });

  it("an invalid table never replaces the last good one", async () => {
    server.publish("chat", [line("a", 10000)]);
    const c = client({ waitSec: 1, minPollIntervalMs: 0 });
    await c.start();
    server.serveRaw("chat", { route: "chat", version: 9, generatedAt: "x", mode: "normal", lines: [{ id: "z", weight: -1 }] });
    await waitFor(() => (c.status()[0]?.consecutiveFailures ?? 0) > 0, 4000, "a rejected table");
    expect(c.version("chat")).toBe(1);
    expect(c.status()[0]?.lastError).toMatch(/invalid table/);
    expect(c.pick("chat")?.name).toBe("a");
  });

  it("close() aborts the held long-poll promptly", async () => {
    server.publish("chat", [line("a", 10000)]);
    const c = client();
    await c.start();
    await waitFor(() => server.requests.some((r) => r.waitSec === 30), 2000, "a held poll");
    const t0 = Date.now();
    await c.close();
    expect(Date.now() - t0).toBeLessThan(500);
  });
});

describe("discovery (no routes configured)", () => {
  it("keeps every route of GET /v1/tables, adds new ones and drops removed ones", async () => {
    server.publish("chat", [line("a", 10000)]);
    server.publish("embed", [line("e", 10000)]);
    const c = client({ routes: [], discoveryIntervalMs: 100 });
    await c.start();
    expect(c.routes().sort()).toEqual(["chat", "embed"]);
    expect(c.version("embed")).toBe(1);
    server.publish("fast", [line("f", 10000)]);
    server.removeRoute("embed");
    await waitFor(() => c.routes().sort().join() === "chat,fast", 3000, "the new route list");
    expect(c.pick("embed")).toBeNull();
    expect(c.pick("fast")?.name).toBe("f");
  });
});

describe("outage: last good tables, cache file, backoff", () => {
  it("writes the last good tables atomically to the cache file, mode 0600", async () => {
    server.publish("chat", [line("a", 10000)]);
    const c = client();
    await c.start();
    const file = join(dir, "tables.json");
    await c.close();
    const doc = JSON.parse(await readFile(file, "utf8"));
    expect(doc.format).toBe("linewatch-router-tables/1");
    expect(doc.routes.chat.table.version).toBe(1);
    expect(doc.routes.chat.table.lines[0].apiKey).toBe("sk-a");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("starts from the file while the control plane is down, then catches up when it returns", async () => {
    server.publish("chat", [line("a", 4000), line("b", 6000)]);
    const first = client();
    await first.start();
    const pulledAt = first.lastPullAt("chat");
    await first.close();

    server.setOutage("reset");
    const second = client({ startTimeoutMs: 1000 });
    await second.start();
    expect(second.version("chat")).toBe(1);
    expect(second.status()[0]).toMatchObject({ source: "file", lastPullAt: pulledAt });
    expect(second.status()[0]?.consecutiveFailures).toBeGreaterThan(0);
    expect(second.pick("chat")?.apiKey).toMatch(/^sk-/);

    server.setOutage("up");
    server.publish("chat", [line("c", 10000)]);
    await waitFor(() => second.version("chat") === 2, 3000, "version 2 after the outage");
    expect(second.status()[0]).toMatchObject({ source: "control-plane", consecutiveFailures: 0, lastError: null });
    expect(second.pick("chat")?.name).toBe("c");
  });

  it("keeps serving the last good table through an outage that starts later", async () => {
    server.publish("chat", [line("a", 10000)]);
    const c = client({ waitSec: 1 });
    await c.start();
    server.setOutage("503");
    await waitFor(() => (c.status()[0]?.consecutiveFailures ?? 0) >= 2, 4000, "failures");
    expect(c.pick("chat")?.name).toBe("a");
    expect(c.status()[0]?.lastError).toMatch(/503/);
  });

  it("backs off exponentially with jitter while unreachable, capped, and resets on success", async () => {
    server.publish("chat", [line("a", 10000)]);
    server.setOutage("reset");
    const delays: number[] = [];
    const sleep = async (ms: number) => {
      delays.push(ms);
      await new Promise((r) => setTimeout(r, 1));
    };
    const c = client({ cacheFile: null, rng: () => 0.5, sleep, backoff: { initialMs: 100, maxMs: 1600 }, startTimeoutMs: 50 });
    await c.start();
    await waitFor(() => delays.length >= 8, 5000, "eight retries");
    // equal jitter with rng 0.5: 3/4 of min(max, initial·2^(n-1))
    expect(delays.slice(0, 8)).toEqual([75, 150, 300, 600, 1200, 1200, 1200, 1200]);
    expect(c.snapshot("chat")).toBeUndefined();
    expect(c.ready()).toBe(false);
    server.setOutage("up");
    await waitFor(() => c.version("chat") === 1, 3000, "recovery");
    expect(c.status()[0]?.consecutiveFailures).toBe(0);
  });

  it("with real timers, retries become sparser while the control plane is down", async () => {
    server.publish("chat", [line("a", 10000)]);
    server.setOutage("reset");
    const c = client({ cacheFile: null, backoff: { initialMs: 20, maxMs: 10_000 }, startTimeoutMs: 50 });
    await c.start();
    await new Promise((r) => setTimeout(r, 1200));
    const attempts = server.requests.map((r) => r.at);
    // 20·2^k/2..20·2^k: within 1.2 s at most ~7 attempts, not hundreds
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.length).toBeLessThanOrEqual(8);
    const gaps = attempts.slice(1).map((t, i) => t - (attempts[i] as number));
    expect(gaps[gaps.length - 1]).toBeGreaterThan(gaps[0] as number);
  });

  it("a corrupt cache file is ignored, not fatal", async () => {
    await writeFile(join(dir, "tables.json"), "{ not json");
    server.publish("chat", [line("a", 10000)]);
    const c = client();
    await c.start();
    expect(c.version("chat")).toBe(1);
  });
});
