import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Lab, startLab } from "@linewatch/lab";
import { type RunningRouter, startRouter } from "@linewatch/router";
import { silentLogger, type TableLine } from "@linewatch/router-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { line, startTableServer, type TableServer, waitFor } from "../../packages/router-client/table-server";

let lab: Lab;
let tables: TableServer;
let router: RunningRouter;
let honoRouter: RunningRouter;
let breaker: Server;
let deadPort: number;
const LINES = ["a", "b", "bad", "slow"] as const;

const labLine = (name: string, weight: number, extra: Partial<TableLine> = {}): TableLine =>
  line(name, weight, { baseUrl: lab.baseUrl(name), model: `${name}-model`, apiKey: `sk-${name}`, ...extra });

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

beforeAll(async () => {
  lab = await startLab({
    lines: [
      { name: "a", apiKey: "sk-a" },
      { name: "b", apiKey: "sk-b" },
      { name: "bad", apiKey: "sk-bad" },
      { name: "slow", apiKey: "sk-slow", streamChunkDelayMs: 150 },
    ],
  });
  deadPort = await freePort();
  tables = await startTableServer({ routerToken: "rt" });
  tables.publish("chat", [labLine("a", 5000), labLine("b", 5000)]);
  // rng 0 (below) picks the first line with weight, and the first one left on a retry.
  tables.publish("first-bad", [labLine("bad", 5000), labLine("b", 5000)]);
  tables.publish("only-bad", [labLine("bad", 10000)]);
  tables.publish("dead-first", [
    labLine("a", 5000, { baseUrl: `http://127.0.0.1:${deadPort}/v1`, name: "dead", id: "id-dead" }),
    labLine("b", 5000),
  ]);
  tables.publish("stream", [labLine("slow", 10000)]);
  tables.publish("closed", [], "panic");
  // An upstream that sends its headers and a first event, then drops the connection.
  breaker = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"partial":true}\n\n');
      setTimeout(() => res.socket?.destroy(), 50);
    });
  });
  await new Promise<void>((r) => breaker.listen(0, "127.0.0.1", r));
  const breakerUrl = `http://127.0.0.1:${(breaker.address() as AddressInfo).port}/v1`;
  tables.publish("breaks-mid-stream", [labLine("a", 5000, { baseUrl: breakerUrl, name: "breaker", id: "id-breaker" }), labLine("b", 5000)]);
  const options = {
    controlPlaneUrl: tables.url,
    token: "rt",
    routes: ["chat", "first-bad", "only-bad", "dead-first", "stream", "closed", "breaks-mid-stream"],
    port: 0,
    cacheFile: null,
    upstreamTimeoutMs: 1000,
    maxBodyBytes: 64 * 1024,
    logger: silentLogger,
    rng: () => 0,
    processMetrics: false,
    // These tests pin which line is tried first (rng 0); local ejection would reorder them.
    ejectAfterFailures: 0,
  };
  router = await startRouter(options);
  honoRouter = await startRouter({ ...options, fastPath: false });
});

afterAll(async () => {
  await router?.close();
  await honoRouter?.close();
  await new Promise<void>((r) => (breaker ? breaker.close(() => r()) : r()));
  await tables?.close();
  await lab?.close();
});

beforeEach(() => {
  for (const name of LINES) lab.setMode(name, "ok");
});

const requests = (name: string) => lab.stats(name).requests;

let target = () => router;

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${target().url}/v1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

const chat = (route: string, extra: Record<string, unknown> = {}) => ({
  model: route,
  messages: [{ role: "user", content: "Say hello in one sentence." }],
  ...extra,
});

const servedBy = [
  ["the direct Node path", () => router],
  ["Hono routes", () => honoRouter],
] as const;

describe.each(servedBy)("router through %s: pass-through", (_name, which) => {
  beforeEach(() => {
    target = which;
  });

  it("forwards a chat completion with the line's model and credential, and tags the response", async () => {
    const before = requests("a");
    // The client's own Authorization is not forwarded: the line's key is.
    const res = await post("/chat/completions", chat("chat"), { authorization: "Bearer client-key" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-linewatch-line")).toBe("a");
    expect(res.headers.get("x-linewatch-table-version")).toBe("1");
    const body = (await res.json()) as { object: string; model: string; choices: { message: { content: string } }[] };
    expect(body.object).toBe("chat.completion");
    expect(body.model).toBe("a-model");
    expect(body.choices[0]?.message.content.length).toBeGreaterThan(0);
    expect(requests("a")).toBe(before + 1);
  });

  it("forwards completions and embeddings", async () => {
    const c = await post("/completions", { model: "chat", prompt: "Once upon a time" });
    expect(c.status).toBe(200);
    expect(((await c.json()) as { object: string }).object).toBe("text_completion");
    const e = await post("/embeddings", { model: "chat", input: ["one", "two"], dimensions: 8 });
    expect(e.status).toBe(200);
    const body = (await e.json()) as { data: { embedding: number[] }[]; model: string };
    expect(body.data).toHaveLength(2);
    expect(body.data[0]?.embedding).toHaveLength(8);
    expect(body.model).toBe("a-model");
  });

  it("streams SSE through as it comes: the first events arrive before the upstream has finished", async () => {
    const t0 = performance.now();
    const res = await post("/chat/completions", chat("stream", { stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("x-linewatch-line")).toBe("slow");
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const arrivals: { at: number; text: string }[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push({ at: performance.now() - t0, text: decoder.decode(value, { stream: true }) });
    }
    const text = arrivals.map((a) => a.text).join("");
    const events = text.split("\n\n").filter((e) => e !== "");
    expect(events.length).toBeGreaterThanOrEqual(4);
    expect(events.at(-1)).toBe("data: [DONE]");
    const first = JSON.parse((events[0] as string).slice("data: ".length)) as { object: string; model: string };
    expect(first).toMatchObject({ object: "chat.completion.chunk", model: "slow-model" });
    // The lab waits 150 ms between events: the first read comes well before the last.
    const total = arrivals.at(-1)?.at as number;
    expect(arrivals.length).toBeGreaterThanOrEqual(3);
    expect((arrivals[0] as { at: number }).at).toBeLessThan(total - 150 * (events.length - 2));
  });

  it("lists the routes on GET /v1/models", async () => {
    const res = await fetch(`${target().url}/v1/models`);
    const body = (await res.json()) as { object: string; data: { id: string; object: string }[] };
    expect(body.object).toBe("list");
    expect(body.data.map((m) => m.id).sort()).toEqual([
      "breaks-mid-stream",
      "chat",
      "closed",
      "dead-first",
      "first-bad",
      "only-bad",
      "stream",
    ]);
    expect(body.data[0]?.object).toBe("model");
  });
});

describe.each(servedBy)("router through %s: retry policy (docs/router.md)", (_name, which) => {
  beforeEach(() => {
    target = which;
  });

  it("returns an upstream 400 unchanged and does not retry it", async () => {
    lab.setMode("bad", "errors", { status: 400 });
    const direct = await fetch(`${lab.baseUrl("bad")}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-bad" },
      body: JSON.stringify(chat("x")),
    });
    const directBody = await direct.text();
    const [bad, b] = [requests("bad"), requests("b")];
    const res = await post("/chat/completions", chat("first-bad"));
    expect(res.status).toBe(400);
    expect(await res.text()).toBe(directBody);
    expect(res.headers.get("content-type")).toBe(direct.headers.get("content-type"));
    expect(res.headers.get("x-linewatch-line")).toBe("bad");
    expect(requests("bad")).toBe(bad + 1);
    expect(requests("b")).toBe(b);
  });

  it.each([
    [500, "errors", { status: 500 }],
    [503, "errors", { status: 503 }],
    [429, "rate-limit", { retryAfterSec: 5 }],
  ] as const)("retries a %i once on another line", async (_status, mode, params) => {
    lab.setMode("bad", mode, params as never);
    const [bad, b] = [requests("bad"), requests("b")];
    const res = await post("/chat/completions", chat("first-bad"));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-linewatch-line")).toBe("b");
    expect(requests("bad")).toBe(bad + 1);
    expect(requests("b")).toBe(b + 1);
  });

  it("retries only once: when the second line fails too, its answer goes back", async () => {
    lab.setMode("bad", "errors", { status: 500 });
    lab.setMode("b", "errors", { status: 502 });
    const [bad, b] = [requests("bad"), requests("b")];
    const res = await post("/chat/completions", chat("first-bad"));
    expect(res.status).toBe(502);
    expect(res.headers.get("x-linewatch-line")).toBe("b");
    expect(requests("bad")).toBe(bad + 1);
    expect(requests("b")).toBe(b + 1);
  });

  it("with no other line in the route, the first answer goes back", async () => {
    lab.setMode("bad", "errors", { status: 500 });
    const bad = requests("bad");
    const res = await post("/chat/completions", chat("only-bad"));
    expect(res.status).toBe(500);
    expect(requests("bad")).toBe(bad + 1);
  });

  it("retries a connect error on another line", async () => {
    const res = await post("/chat/completions", chat("dead-first"));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-linewatch-line")).toBe("b");
  });

  it("retries a timeout on another line; a timeout on the last try is a 504", async () => {
    lab.setMode("bad", "hang");
    const res = await post("/chat/completions", chat("first-bad"));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-linewatch-line")).toBe("b");
    const only = await post("/chat/completions", chat("only-bad"));
    expect(only.status).toBe(504);
    expect(((await only.json()) as { error: { code: string } }).error.code).toBe("upstream_timeout");
    expect(only.headers.get("x-linewatch-line")).toBe("bad");
  });

  it("never retries once the first byte has gone out: a stream cut by its upstream reaches the client cut", async () => {
    const b = requests("b");
    const res = await post("/chat/completions", chat("breaks-mid-stream", { stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-linewatch-line")).toBe("breaker");
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"partial":true');
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return "ended cleanly";
      })(),
    ).rejects.toThrow();
    expect(requests("b")).toBe(b);
  });
});

describe("router: errors and affinity", () => {
  beforeEach(() => {
    target = () => router;
  });

  it("answers an unknown route with an OpenAI-style 404", async () => {
    const res = await post("/chat/completions", chat("no-such-route"));
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; type: string; param: string; message: string } };
    expect(body.error).toMatchObject({ code: "model_not_found", type: "invalid_request_error", param: "model" });
  });

  it("answers an empty table (fail-closed) with a 503 and the table version", async () => {
    const res = await post("/chat/completions", chat("closed"));
    expect(res.status).toBe(503);
    expect(res.headers.get("x-linewatch-table-version")).toBe("1");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("no_line_available");
  });

  it("answers a body over the limit with a 413", async () => {
    const res = await post("/chat/completions", chat("chat", { padding: "x".repeat(70 * 1024) }));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    const ok = await post("/embeddings", { model: "chat", input: "still fine" });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
  });

  it("counts a client that leaves mid-stream as interrupted, and stops the upstream", async () => {
    const res = await post("/chat/completions", chat("stream", { stream: true }));
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel();
    const metricsText = async () => (await fetch(`${router.url}/metrics`)).text();
    let text = "";
    const deadline = Date.now() + 3000;
    while (!/linewatch_router_responses_interrupted_total\{route="stream",line="slow"\} [1-9]/.test(text) && Date.now() < deadline) {
      text = await metricsText();
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(text).toMatch(/linewatch_router_responses_interrupted_total\{route="stream",line="slow"\} [1-9]/);
  });

  it("answers a body that is not JSON, or has no model, with a 400", async () => {
    const res = await fetch(`${router.url}/v1/chat/completions`, { method: "POST", body: "nope" });
    expect(res.status).toBe(400);
    const noModel = await post("/chat/completions", { messages: [] });
    expect(noModel.status).toBe(400);
    expect(((await noModel.json()) as { error: { param: string } }).error.param).toBe("model");
  });

  it("keeps an affinity key (header or `user`) on one line", async () => {
    // This router's rng is fixed at 0; a second router with a real rng shows the key decides.
    const r2 = await startRouter({
      controlPlaneUrl: tables.url,
      token: "rt",
      routes: ["chat"],
      port: 0,
      cacheFile: null,
      logger: silentLogger,
      processMetrics: false,
    });
    try {
      const lineOf = async (headers: Record<string, string>, user?: string) => {
        const res = await fetch(`${r2.url}/v1/embeddings`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ model: "chat", input: "x", ...(user ? { user } : {}) }),
        });
        await res.arrayBuffer();
        return res.headers.get("x-linewatch-line");
      };
      for (const key of ["session-1", "session-2", "session-3"]) {
        const viaHeader = new Set<string | null>();
        const viaUser = new Set<string | null>();
        for (let i = 0; i < 8; i++) {
          viaHeader.add(await lineOf({ "x-linewatch-affinity": key }));
          viaUser.add(await lineOf({}, key));
        }
        expect(viaHeader.size).toBe(1);
        expect(viaUser).toEqual(viaHeader);
      }
      const spread = new Set<string | null>();
      for (let i = 0; i < 40; i++) spread.add(await lineOf({}));
      expect(spread).toEqual(new Set(["a", "b"]));
    } finally {
      await r2.close();
    }
  });

  it("follows a new table version without a restart", async () => {
    tables.publish("chat", [labLine("b", 10000)]);
    await waitFor(() => router.client.version("chat") === 2, 3000, "version 2");
    const res = await post("/chat/completions", chat("chat"));
    expect(res.headers.get("x-linewatch-line")).toBe("b");
    expect(res.headers.get("x-linewatch-table-version")).toBe("2");
    await res.arrayBuffer();
  });
});

describe("router: operations", () => {
  beforeEach(() => {
    target = () => router;
  });

  it("exposes Prometheus metrics on its own registry", async () => {
    const text = await (await fetch(`${router.url}/metrics`)).text();
    expect(text).toMatch(/linewatch_router_requests_total\{route="chat",line="a",outcome="ok"\} \d+/);
    expect(text).toMatch(/linewatch_router_upstream_attempts_total\{route="first-bad",line="bad",outcome="upstream_error"\} \d+/);
    expect(text).toMatch(/linewatch_router_retries_total\{route="first-bad",reason="http_5xx"\} \d+/);
    expect(text).toMatch(/linewatch_router_upstream_latency_seconds_bucket\{route="chat",line="a",le="0.005"\} \d+/);
    expect(text).toMatch(/linewatch_router_table_version\{route="stream"\} 1/);
    expect(text).toMatch(/linewatch_router_table_age_seconds\{route="chat"\} [\d.]+/);
    expect(text).toMatch(/linewatch_router_requests_total\{route="",line="none",outcome="unknown_route"\} \d+/);
  });

  it("reports health and readiness", async () => {
    const health = (await (await fetch(`${router.url}/healthz`)).json()) as {
      status: string;
      ready: boolean;
      routes: { route: string; source: string }[];
    };
    expect(health.status).toBe("ok");
    expect(health.ready).toBe(true);
    expect(health.routes.find((r) => r.route === "stream")).toMatchObject({ source: "control-plane" });
    expect((await fetch(`${router.url}/readyz`)).status).toBe(200);
  });

  it("answers unknown paths with an OpenAI-style 404", async () => {
    const res = await fetch(`${router.url}/v1/nope`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unknown_url");
  });

  it("works through app.request too (no Node bindings), streaming included", async () => {
    const res = await router.app.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chat("stream", { stream: true })),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-linewatch-line")).toBe("slow");
    const text = await res.text();
    expect(text.trim().endsWith("data: [DONE]")).toBe(true);
  });
});

describe("router: control plane down at start", () => {
  it("answers 503 (not 404) until it has a route list, then serves", async () => {
    const cp = await startTableServer({ routerToken: "rt" });
    cp.publish("late", [labLine("a", 10000)]);
    cp.setOutage("reset");
    const r = await startRouter({
      controlPlaneUrl: cp.url,
      token: "rt",
      port: 0,
      cacheFile: null,
      logger: silentLogger,
      processMetrics: false,
      clientOptions: { startTimeoutMs: 200, backoff: { initialMs: 20, maxMs: 100 }, discoveryIntervalMs: 100 },
    });
    try {
      const send = () =>
        fetch(`${r.url}/v1/embeddings`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "late", input: "x" }),
        });
      const before = await send();
      expect(before.status).toBe(503);
      expect(((await before.json()) as { error: { code: string } }).error.code).toBe("table_not_loaded");
      expect((await fetch(`${r.url}/readyz`)).status).toBe(503);
      cp.setOutage("up");
      await waitFor(() => r.client.version("late") === 1, 5000, "the route list");
      const after = await send();
      expect(after.status).toBe(200);
      expect(after.headers.get("x-linewatch-line")).toBe("a");
      await after.arrayBuffer();
    } finally {
      await r.close();
      await cp.close();
    }
  });
});
