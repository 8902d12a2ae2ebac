// Issue 12, the router's side: the in-band answer check on streams (bytes untouched), in-band
// failover of non-streamed bad 200s, the retry budget, and a failing line that clients never see.
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Lab, startLab } from "@linewatch/lab";
import { RETRY_HEADER, type RunningRouter, startRouter } from "@linewatch/router";
import { type OutcomeReport, silentLogger, type TableLine } from "@linewatch/router-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { line, startTableServer, type TableServer } from "../../packages/router-client/table-server";

let lab: Lab;
let tables: TableServer;
let sse: Server;
const routers: RunningRouter[] = [];

const labLine = (name: string, weight: number): TableLine =>
  line(name, weight, { baseUrl: lab.baseUrl(name), model: `${name}-model`, apiKey: `sk-${name}` });

/** Events split mid-JSON across writes; `complete: false` drops the finish chunk and `[DONE]`. */
function sseEvents(complete: boolean): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const body = [chunk({ role: "assistant", content: "" }, null), chunk({ content: "Hello, " }, null), chunk({ content: "wörld ✓" }, null)];
  if (complete) body.push(chunk({}, "stop"), "data: [DONE]\n\n");
  const text = body.join("");
  // Cut into odd pieces (inside JSON, inside a multi-byte character) to exercise the incremental parser.
  const bytes = Buffer.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < bytes.length; i += 37) pieces.push(bytes.subarray(i, i + 37).toString("latin1"));
  return pieces;
}

async function startSseUpstream(): Promise<Server> {
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => {
      raw += c.toString();
    });
    req.on("end", () => {
      const complete = !raw.includes("CUT-ME");
      res.writeHead(200, { "content-type": "text/event-stream" });
      const pieces = sseEvents(complete);
      let i = 0;
      const next = () => {
        if (i < pieces.length) {
          res.write(Buffer.from(pieces[i++] as string, "latin1"));
          setImmediate(next);
        } else res.end();
      };
      next();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

async function newRouter(routes: string[], rng: () => number = () => 0): Promise<RunningRouter> {
  const r = await startRouter({
    controlPlaneUrl: tables.url,
    token: "rt",
    routes,
    port: 0,
    cacheFile: null,
    upstreamTimeoutMs: 2000,
    logger: silentLogger,
    rng,
    processMetrics: false,
    reportIntervalMs: 0,
  });
  routers.push(r);
  return r;
}

beforeAll(async () => {
  lab = await startLab({
    lines: [
      { name: "long", apiKey: "sk-long", mode: { mode: "long-prompt", minPromptChars: 200 } },
      { name: "masked", apiKey: "sk-masked", mode: { mode: "long-prompt", minPromptChars: 200, answer: "masked-error" } },
      { name: "good", apiKey: "sk-good" },
      { name: "e1", apiKey: "sk-e1", mode: "errors" },
      { name: "e2", apiKey: "sk-e2", mode: "errors" },
      { name: "f", apiKey: "sk-f", mode: "errors" },
      { name: "g", apiKey: "sk-g" },
    ],
  });
  sse = await startSseUpstream();
  tables = await startTableServer({ routerToken: "rt" });
  const sseUrl = `http://127.0.0.1:${(sse.address() as AddressInfo).port}/v1`;
  tables.publish("sse", [line("sse", 10000, { baseUrl: sseUrl })]);
  tables.publish("long-first", [labLine("long", 5000), labLine("good", 5000)]);
  tables.publish("masked-first", [labLine("masked", 5000), labLine("good", 5000)]);
  tables.publish("all-500", [labLine("e1", 5000), labLine("e2", 5000)]);
  tables.publish("one-failing", [labLine("f", 5000), labLine("g", 5000)]);
});

afterAll(async () => {
  for (const r of routers) await r.close();
  await new Promise<void>((r) => (sse ? sse.close(() => r()) : r()));
  await tables?.close();
  await lab?.close();
});

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

async function post(router: RunningRouter, body: unknown): Promise<Response> {
  return fetch(`${router.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function liveCount(router: RunningRouter, route: string, lineName: string, outcome: string): Promise<number> {
  const text = await (await fetch(`${router.url}/metrics`)).text();
  const m = new RegExp(`linewatch_router_live_answers_total\\{route="${route}",line="${lineName}",outcome="${outcome}"\\} (\\d+)`).exec(
    text,
  );
  return m ? Number(m[1]) : 0;
}

const LONG = "Summarise this for me, please. ".repeat(20);
const chat = (route: string, content: string, extra: Record<string, unknown> = {}) => ({
  model: route,
  messages: [{ role: "user", content }],
  ...extra,
});

describe("in-band check of streams", () => {
  it("a stream that completes is ok, one that ends without a finish reason is cut, and the client gets the upstream's bytes exactly", async () => {
    const router = await newRouter(["sse"]);
    for (const [prompt, outcome] of [
      ["hello", "ok"],
      ["CUT-ME", "cut"],
    ] as const) {
      const upstream = new Uint8Array(
        await (
          await fetch(`http://127.0.0.1:${(sse.address() as AddressInfo).port}/v1/chat/completions`, {
            method: "POST",
            body: JSON.stringify(chat("x", prompt, { stream: true })),
          })
        ).arrayBuffer(),
      );
      const before = await liveCount(router, "sse", "sse", outcome);
      const res = await post(router, chat("sse", prompt, { stream: true }));
      expect(res.status).toBe(200);
      expect(res.headers.get(RETRY_HEADER)).toBeNull();
      const client = new Uint8Array(await res.arrayBuffer());
      expect(sha(client)).toBe(sha(upstream));
      expect(client.length).toBeGreaterThan(100);
      expect(await liveCount(router, "sse", "sse", outcome)).toBe(before + 1);
    }
    expect(await liveCount(router, "sse", "sse", "ok")).toBe(1);
    expect(await liveCount(router, "sse", "sse", "cut")).toBe(1);
  });

  it("a streamed empty answer goes to the client as it is (never retried after its first byte) and counts as empty", async () => {
    const router = await newRouter(["long-first"]);
    const [long, good] = [lab.stats("long").requests, lab.stats("good").requests];
    const res = await post(router, chat("long-first", LONG, { stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-linewatch-line")).toBe("long");
    const text = await res.text();
    expect(text).toContain("data: [DONE]");
    expect(lab.stats("long").requests).toBe(long + 1);
    expect(lab.stats("good").requests).toBe(good);
    expect(await liveCount(router, "long-first", "long", "empty")).toBe(1);
  });
});

describe("in-band failover of non-streamed answers", () => {
  it("an empty 200 is retried once on another line, marked with x-linewatch-retried; a short prompt is answered by the first line", async () => {
    const router = await newRouter(["long-first"]);
    const short = await post(router, chat("long-first", "Say hello."));
    expect(short.status).toBe(200);
    expect(short.headers.get("x-linewatch-line")).toBe("long");
    expect(short.headers.get(RETRY_HEADER)).toBeNull();

    const res = await post(router, chat("long-first", LONG));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-linewatch-line")).toBe("good");
    expect(res.headers.get(RETRY_HEADER)).toBe("empty");
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content.length).toBeGreaterThan(0);
    expect(await liveCount(router, "long-first", "long", "empty")).toBe(1);
    expect(await liveCount(router, "long-first", "good", "ok")).toBe(1);
    expect(await liveCount(router, "long-first", "long", "ok")).toBe(1);
  });

  it("an error object in a 200 (masked error) is retried the same way", async () => {
    const router = await newRouter(["masked-first"]);
    const res = await post(router, chat("masked-first", LONG));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-linewatch-line")).toBe("good");
    expect(res.headers.get(RETRY_HEADER)).toBe("masked_error");
    expect(((await res.json()) as { error?: unknown }).error).toBeUndefined();
    expect(await liveCount(router, "masked-first", "masked", "masked_error")).toBe(1);
  });
});

describe("retry budget", () => {
  it("with every line answering 500, upstream requests stay within 1.2 × client requests, and the errors reach the client as they came", async () => {
    const router = await newRouter(["all-500"], Math.random);
    const before = lab.stats("e1").requests + lab.stats("e2").requests;
    const CLIENT = 100;
    const statuses = new Map<number, number>();
    for (let i = 0; i < CLIENT; i++) {
      const res = await post(router, chat("all-500", "Say hello."));
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    const upstream = lab.stats("e1").requests + lab.stats("e2").requests - before;
    expect(upstream).toBeGreaterThanOrEqual(CLIENT);
    expect(upstream).toBeLessThanOrEqual(1.2 * CLIENT);
    // The lab's own 500s, not a router-made 502.
    expect([...statuses]).toEqual([[500, CLIENT]]);
    const text = await (await fetch(`${router.url}/metrics`)).text();
    expect(Number(/linewatch_router_retry_budget_exhausted_total\{route="all-500"\} (\d+)/.exec(text)?.[1])).toBeGreaterThan(0);
  });

  it("with one line failing every request, every client request still succeeds", async () => {
    const router = await newRouter(["one-failing"], Math.random);
    const [f0, g0] = [lab.stats("f").requests, lab.stats("g").requests];
    const CLIENT = 200;
    for (let i = 0; i < CLIENT; i++) {
      const res = await post(router, chat("one-failing", "Say hello."));
      await res.arrayBuffer();
      expect(res.status).toBe(200);
    }
    // The failing line was tried (and found out), yet no client saw it.
    expect(lab.stats("f").requests - f0).toBeGreaterThan(0);
    expect(lab.stats("g").requests - g0).toBe(CLIENT);
  });
});

/** Polls `check` for up to 5 s. */
async function eventuallyTrue(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  return check();
}

describe("what ejection held back (issue 27)", () => {
  /** A router whose outcome pushes land in `reports` (the table pulls go to the table server). */
  async function capturingRouter(routes: string[], reports: OutcomeReport[], reportIntervalMs = 0): Promise<RunningRouter> {
    const capture: typeof fetch = async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (!url.endsWith("/v1/outcomes")) return fetch(input, init);
      reports.push(JSON.parse(String(init?.body)) as OutcomeReport);
      return Response.json({ stored: 0, duplicate: false });
    };
    const r = await startRouter({
      controlPlaneUrl: tables.url,
      token: "rt",
      routes,
      port: 0,
      cacheFile: null,
      logger: silentLogger,
      // Every pick by the table is the route's first line: the failing one.
      rng: () => 0,
      processMetrics: false,
      reportIntervalMs,
      clientOptions: { fetch: capture },
    });
    routers.push(r);
    return r;
  }
  const heldMetric = async (router: RunningRouter, route: string, lineName: string) => {
    const text = await (await fetch(`${router.url}/metrics`)).text();
    const m = new RegExp(`linewatch_router_held_back_total\\{route="${route}",line="${lineName}"\\} (\\d+)`).exec(text);
    return m ? Number(m[1]) : 0;
  };
  const sumOf = (reports: OutcomeReport[], lineId: string) => {
    let answers = 0;
    let held = 0;
    for (const l of reports.flatMap((r) => r.lines).filter((l) => l.lineId === lineId)) {
      answers += Object.values(l.counts).reduce((a, b) => a + b, 0);
      held += l.heldBack ?? 0;
    }
    return { answers, held };
  };

  it("first attempts the table gave an ejected line go to another line, and are counted and reported for the ejected one", async () => {
    tables.publish("held", [labLine("f", 5000), labLine("g", 5000)]);
    const reports: OutcomeReport[] = [];
    const router = await capturingRouter(["held"], reports);
    const [f0, g0] = [lab.stats("f").requests, lab.stats("g").requests];
    const CLIENT = 40;
    for (let i = 0; i < CLIENT; i++) {
      const res = await post(router, chat("held", "Say hello."));
      await res.arrayBuffer();
      expect(res.status).toBe(200);
    }
    router.reporter.flush();
    await router.reporter.push();
    const f = sumOf(reports, labLine("f", 1).id);
    // The table gave every request to f: each was either answered by f (the failures that ejected
    // it, and one after each ejection ends) or held back from it.
    expect(f.answers).toBe(lab.stats("f").requests - f0);
    expect(f.answers).toBeGreaterThanOrEqual(3);
    expect(f.answers + f.held).toBe(CLIENT);
    expect(f.held).toBeGreaterThan(0);
    expect(await heldMetric(router, "held", "f")).toBe(f.held);
    // g answered every request: the retries of f's failures and what was held back from f.
    expect(lab.stats("g").requests - g0).toBe(CLIENT);
    expect(sumOf(reports, labLine("g", 1).id).held).toBe(0);
  });

  it("with no other line left the ejected line still serves, and nothing is counted as held back", async () => {
    tables.publish("held-alone", [labLine("f", 10000)]);
    const reports: OutcomeReport[] = [];
    const router = await capturingRouter(["held-alone"], reports);
    const f0 = lab.stats("f").requests;
    for (let i = 0; i < 10; i++) await (await post(router, chat("held-alone", "Say hello."))).arrayBuffer();
    router.reporter.flush();
    await router.reporter.push();
    expect(lab.stats("f").requests - f0).toBe(10);
    expect(sumOf(reports, labLine("f", 1).id)).toEqual({ answers: 10, held: 0 });
    expect(await heldMetric(router, "held-alone", "f")).toBe(0);
  });

  it("ejecting a line pushes the report at once, not at the next tick: the failures that ejected it reach the control plane now", async () => {
    tables.publish("held-early", [labLine("f", 5000), labLine("g", 5000)]);
    const reports: OutcomeReport[] = [];
    // A tick a minute away: only the early push can deliver within the test.
    const router = await capturingRouter(["held-early"], reports, 60_000);
    for (let i = 0; i < 3; i++) await (await post(router, chat("held-early", "Say hello."))).arrayBuffer();
    const pushed = await eventuallyTrue(() => sumOf(reports, labLine("f", 1).id).answers >= 3);
    expect(pushed).toBe(true);
    const f = reports.flatMap((r) => r.lines).find((l) => l.lineId === labLine("f", 1).id);
    expect(f?.counts.http_5xx).toBe(3);
  });
});
