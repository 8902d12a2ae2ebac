import type { PublishedLine, PublishedTable } from "@linewatch/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CachedLine, RegistrySnapshot } from "../../../apps/control-plane/src/registry-cache";
import { ServedTables } from "../../../apps/control-plane/src/tables/served-tables";
import { goneWith, TableWaiters, WAKE_CHUNK } from "../../../apps/control-plane/src/tables/table-waiters";

// Two parts of the table publisher alone (issue 23 item 3): the served versions and the long-polls.
// The publisher's own tests (table-publisher, table-listener, tables) check them together.
const line = (id: string, weight: number): PublishedLine => ({
  lineId: id,
  id,
  weight,
  name: `line-${id}`,
  tier: "paid",
  state: "healthy",
  protocol: "openai-chat",
  baseUrl: "http://127.0.0.1:9/v1",
  model: "m",
  credentials: "rev",
});
const table = (route: string, version: number, lines: PublishedLine[] = [line("a", 10_000)]): PublishedTable<PublishedLine> => ({
  route,
  mode: "normal",
  version,
  generatedAt: 1_000 * version,
  lines,
});
const cachedLine = (id: string, apiKey: string): CachedLine => ({
  id,
  name: `line-${id}`,
  tier: "paid",
  protocol: "openai-chat",
  baseUrl: "http://127.0.0.1:9/v1",
  model: "m",
  headers: { "x-org": "o" },
  routes: [{ route: "chat", weight: 1 }],
  probeIntervalSec: 45,
  timeoutMs: null,
  dailyQuota: null,
  probeBudgetPct: 10,
  maxShare: null,
  adminState: "active",
  hasApiKey: true,
  createdAt: "2026-01-05T12:00:00.000Z",
  apiKey,
  updatedAt: "2026-01-05T12:00:00.000Z",
});
const snapshotWith = (keys: Record<string, string>): RegistrySnapshot => ({
  lines: new Map(Object.entries(keys).map(([id, apiKey]) => [id, cachedLine(id, apiKey)])),
  samples: new Map(),
  routes: new Map(),
  loadedAt: 0,
});

describe("ServedTables", () => {
  it("serves only a newer version of a route, and tells of each", () => {
    const newer: string[] = [];
    const served = new ServedTables((route) => newer.push(route));
    expect(served.get("chat")).toBeNull();
    expect(served.version("chat")).toBeNull();
    served.offer(table("chat", 2));
    served.offer(table("chat", 2, [line("b", 10_000)]));
    served.offer(table("chat", 1));
    served.take([
      { route: "chat", version: 5, table: null }, // a shape this version cannot read: not served
      { route: "alpha", version: 1, table: table("alpha", 1) },
    ]);
    expect(newer).toEqual(["chat", "alpha"]);
    expect(served.version("chat")).toBe(2);
    const chat = served.get("chat");
    expect(chat?.etag).toBe('"2"');
    expect(JSON.parse(chat?.body.toString() ?? "null")).toEqual(chat?.view);
    expect(chat?.view.lines.map((l) => l.id)).toEqual(["a"]);
    expect(served.views().map((v) => v.route)).toEqual(["alpha", "chat"]);
  });

  it("builds a router's credentialed body once per version and set of line objects", () => {
    const served = new ServedTables(() => {});
    served.offer(table("chat", 1, [line("a", 6_000), line("b", 4_000)]));
    const current = served.get("chat");
    if (!current) throw new Error("no table served");
    const first = snapshotWith({ a: "sk-a", b: "sk-b" });
    const body = served.credentialedBody(current, first);
    expect(JSON.parse(body.toString()).lines.map((l: { apiKey: string }) => l.apiKey)).toEqual(["sk-a", "sk-b"]);
    expect(current.body.toString()).not.toContain("sk-a");
    // Another snapshot holding the same line objects (another route changed): the same body.
    const same: RegistrySnapshot = { ...first, loadedAt: 1 };
    expect(served.credentialedBody(current, same)).toBe(body);
    // A line with a new key: a new body.
    const rotated = snapshotWith({ a: "sk-a2", b: "sk-b" });
    expect(JSON.parse(served.credentialedBody(current, rotated).toString()).lines[0].apiKey).toBe("sk-a2");
  });
});

describe("TableWaiters", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("wakes every waiter of a route once and keeps none of them", async () => {
    const waiters = new TableWaiters();
    const woken: string[] = [];
    const waits = [
      waiters.wait("chat", 60_000).then(() => woken.push("chat 1")),
      waiters.wait("chat", 60_000).then(() => woken.push("chat 2")),
    ];
    const other = waiters.wait("other", 60_000).then(() => woken.push("other"));
    expect(waiters.count("chat")).toBe(2);
    waiters.wake("chat");
    await Promise.all(waits);
    expect(woken).toEqual(["chat 1", "chat 2"]);
    expect(waiters.count("chat")).toBe(0);
    expect(waiters.count("other")).toBe(1);
    waiters.wake("chat"); // nobody left to wake
    waiters.wakeAll();
    await other;
    expect(woken).toEqual(["chat 1", "chat 2", "other"]);
    expect(waiters.count("other")).toBe(0);
  });

  it("lets a waiter go when its client does, or when its time is up", async () => {
    vi.useFakeTimers();
    const waiters = new TableWaiters();
    const abort = new AbortController();
    const gone = waiters.wait("chat", 60_000, goneWith(abort.signal));
    const timed = waiters.wait("chat", 5_000);
    expect(waiters.count("chat")).toBe(2);
    abort.abort();
    await gone;
    expect(waiters.count("chat")).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(5_000);
    await timed;
    expect(waiters.count("chat")).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  /** `n` polls waiting on the route, each recording the served version it answers with and how often it was answered. */
  function polls(waiters: TableWaiters, served: ServedTables, n: number, gone?: (i: number) => ReturnType<typeof goneWith>) {
    const answers: (number | null)[][] = Array.from({ length: n }, () => []);
    const done = Array.from({ length: n }, (_, i) =>
      waiters.wait("chat", 60_000, gone?.(i)).then(() => {
        answers[i]?.push(served.version("chat"));
      }),
    );
    return { answers, done };
  }

  it("answers a wake in chunks with a turn between them, each waiter once with the newest version", async () => {
    const waiters = new TableWaiters();
    const served = new ServedTables((route) => waiters.wake(route));
    served.offer(table("chat", 1));
    const n = WAKE_CHUNK * 3 + 7;
    const { answers, done } = polls(waiters, served, n);
    served.offer(table("chat", 2));
    // Other work scheduled after the wake runs before its last chunk is answered.
    let answeredWhenOtherWorkRan = -1;
    setImmediate(() => {
      answeredWhenOtherWorkRan = answers.filter((a) => a.length > 0).length;
    });
    // A version published while the wake is under way: the waiters not answered yet get it.
    await new Promise((resolve) => setImmediate(resolve));
    const answeredBeforeV3 = answers.filter((a) => a.length > 0).length;
    served.offer(table("chat", 3));
    await Promise.all(done);
    expect(answeredWhenOtherWorkRan).toBeGreaterThan(0);
    expect(answeredWhenOtherWorkRan).toBeLessThan(n);
    expect(answeredBeforeV3).toBeGreaterThan(0);
    expect(answeredBeforeV3).toBeLessThan(n);
    expect(answers.every((a) => a.length === 1)).toBe(true);
    const versions = answers.map((a) => a[0]);
    expect(versions.slice(0, answeredBeforeV3).every((v) => v === 2)).toBe(true);
    expect(versions.slice(answeredBeforeV3).every((v) => v === 3)).toBe(true);
    // Nothing is left behind: no waiter, and later wakes answer nobody again.
    expect(waiters.count("chat")).toBe(0);
    served.offer(table("chat", 4));
    await new Promise((resolve) => setImmediate(resolve));
    expect(answers.every((a) => a.length === 1)).toBe(true);
  });

  it("keeps a poll that comes during a wake for the next version", async () => {
    const waiters = new TableWaiters();
    const served = new ServedTables((route) => waiters.wake(route));
    served.offer(table("chat", 1));
    const first = polls(waiters, served, WAKE_CHUNK * 2);
    served.offer(table("chat", 2));
    // The wake is under way (its first chunk answered); a router that already has version 2 polls again.
    let late: number | null = null;
    const again = waiters.wait("chat", 60_000).then(() => {
      late = served.version("chat");
    });
    expect(waiters.count("chat")).toBe(1);
    await Promise.all(first.done);
    expect(late).toBeNull();
    served.offer(table("chat", 3));
    await again;
    expect(late).toBe(3);
  });

  it("lets a waiter go when its client leaves during a wake: no timer, no second answer", async () => {
    // Waiters' timers faked (counted apart from anything else's), the wake's turns real.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const waiters = new TableWaiters();
    const served = new ServedTables((route) => waiters.wake(route));
    served.offer(table("chat", 1));
    const n = WAKE_CHUNK * 2;
    const aborts = Array.from({ length: n }, () => new AbortController());
    const { answers, done } = polls(waiters, served, n, (i) => goneWith(aborts[i]?.signal as AbortSignal));
    expect(vi.getTimerCount()).toBe(n);
    served.offer(table("chat", 2));
    // The last waiter's client leaves before its chunk is answered: it is answered then, and only then.
    aborts[n - 1]?.abort();
    await Promise.resolve();
    expect(answers[n - 1]).toEqual([2]);
    expect(answers[n - 2]).toEqual([]);
    await Promise.all(done);
    expect(answers.every((a) => a.length === 1)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    expect(waiters.count("chat")).toBe(0);
  });
});
