// The router speaks every protocol a relay does (issue 24): the official SDKs, unchanged, pointed at the
// router, through routes of lab lines of each protocol. A request goes only to the lines of its
// protocol; credentials go the protocol's way and the client's never reach a line; streams pass byte
// for byte; the router's own errors come in the client API's shape, as the SDK's typed errors.
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import { type Lab, type RecordedRequest, startLab } from "@linewatch/lab";
import { RETRY_HEADER, type RunningRouter, startRouter } from "@linewatch/router";
import { silentLogger, type TableLine } from "@linewatch/router-client";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { line, startTableServer, type TableServer } from "../../packages/router-client/table-server";

const CLIENT_KEY = "sk-client-own-secret";
let lab: Lab;
let tables: TableServer;
let fixed: Server;
let router: RunningRouter;
let randomRouter: RunningRouter;
let deadPort: number;
const LINES = ["c1", "c2", "r1", "r2", "o1"] as const;

const labLine = (name: string, protocol: string, weight: number, extra: Partial<TableLine> = {}): TableLine =>
  line(name, weight, { baseUrl: extra.baseUrl ?? lab.baseUrl(name), model: `${name}-model`, apiKey: `sk-${name}`, protocol, ...extra });
const claude = (name: string, weight: number, extra: Partial<TableLine> = {}) => labLine(name, "anthropic-messages", weight, extra);
const responses = (name: string, weight: number, extra: Partial<TableLine> = {}) => labLine(name, "openai-responses", weight, extra);

// ---- a fixed-bytes upstream: what the client gets must be exactly these bytes -----------------------
const ANTHROPIC_BYTES = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_fixed","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
  'event: ping\ndata: {"type": "ping"}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Grüße aus "}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Köln ✓"}}\n\n',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":30}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
].join("");
const RESPONSES_BYTES = [
  'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_fixed","object":"response","status":"in_progress","output":[]}}\n\n',
  'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Grüße aus Köln ✓"}\n\n',
  'event: response.completed\ndata: {"type":"response.completed","sequence_number":2,"response":{"id":"resp_fixed","object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Grüße aus Köln ✓"}]}],"usage":{"input_tokens":9,"output_tokens":30,"total_tokens":39}}}\n\n',
].join("");

async function startFixedUpstream(): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const bytes = Buffer.from(req.url?.endsWith("/messages") ? ANTHROPIC_BYTES : RESPONSES_BYTES);
      res.writeHead(200, { "content-type": "text/event-stream" });
      // Odd pieces: inside JSON, inside a multi-byte character.
      let i = 0;
      const next = () => {
        if (i >= bytes.length) return void res.end();
        res.write(bytes.subarray(i, i + 41));
        i += 41;
        setImmediate(next);
      };
      next();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const routerOptions = () => ({
  controlPlaneUrl: tables.url,
  token: "rt",
  port: 0,
  cacheFile: null,
  upstreamTimeoutMs: 2000,
  maxBodyBytes: 64 * 1024,
  logger: silentLogger,
  processMetrics: false,
  reportIntervalMs: 0,
  ejectAfterFailures: 0,
});

beforeAll(async () => {
  lab = await startLab({ lines: LINES.map((name) => ({ name, apiKey: `sk-${name}` })) });
  fixed = await startFixedUpstream();
  deadPort = await freePort();
  tables = await startTableServer({ routerToken: "rt" });
  const fixedUrl = `http://127.0.0.1:${(fixed.address() as AddressInfo).port}/v1`;
  const dead = `http://127.0.0.1:${deadPort}/v1`;
  // rng 0 (the first router) picks the first line of the request's protocol, and the next one on a retry.
  tables.publish("mixed", [
    claude("c1", 5000),
    responses("r1", 5000),
    labLine("o1", "openai-chat", 10000),
    claude("c2", 5000),
    responses("r2", 5000),
  ]);
  tables.publish("spread", [claude("c1", 7500), claude("c2", 2500)]);
  tables.publish("chat-only", [labLine("o1", "openai-chat", 10000)]);
  tables.publish("closed", [], "panic");
  tables.publish("fixed", [
    claude("fa", 10000, { baseUrl: fixedUrl, id: "id-fa" }),
    responses("fr", 10000, { baseUrl: fixedUrl, id: "id-fr" }),
  ]);
  tables.publish("dead", [claude("d1", 5000, { baseUrl: dead, id: "id-d1" }), claude("d2", 5000, { baseUrl: dead, id: "id-d2" })]);
  const routes = ["mixed", "spread", "chat-only", "closed", "fixed", "dead"];
  router = await startRouter({ ...routerOptions(), routes, rng: () => 0 });
  randomRouter = await startRouter({ ...routerOptions(), routes });
});

afterAll(async () => {
  await router?.close();
  await randomRouter?.close();
  await new Promise<void>((r) => (fixed ? fixed.close(() => r()) : r()));
  await tables?.close();
  await lab?.close();
});

beforeEach(() => {
  for (const name of LINES) lab.setMode(name, "ok");
});

const anthropicAt = (r: RunningRouter, extra: ConstructorParameters<typeof Anthropic>[0] = {}) =>
  new Anthropic({ baseURL: r.url, apiKey: CLIENT_KEY, maxRetries: 0, ...extra });
const openaiAt = (r: RunningRouter) => new OpenAI({ baseURL: `${r.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
const lastRequest = (name: string): RecordedRequest => lab.requests(name).at(-1) as RecordedRequest;
const header = (r: RecordedRequest, name: string) => r.headers.filter(([k]) => k.toLowerCase() === name).map(([, v]) => v);
const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");
const requests = (name: string) => lab.stats(name).requests;
const ask = { max_tokens: 200, messages: [{ role: "user" as const, content: "Say hello in one sentence." }] };

async function liveCount(route: string, lineName: string, outcome: string): Promise<number> {
  const text = await (await fetch(`${router.url}/metrics`)).text();
  const m = new RegExp(`linewatch_router_live_answers_total\\{route="${route}",line="${lineName}",outcome="${outcome}"\\} (\\d+)`).exec(
    text,
  );
  return m ? Number(m[1]) : 0;
}

/** What a line received carries nothing of the client's key, and the line's own key the protocol's way. */
function expectLineCredential(r: RecordedRequest, name: string, how: "authorization" | "x-api-key") {
  expect(JSON.stringify(r)).not.toContain(CLIENT_KEY);
  if (how === "authorization") expect(header(r, "authorization")).toEqual([`Bearer sk-${name}`]);
  else expect(header(r, "x-api-key")).toEqual([`sk-${name}`]);
}

describe("/v1/messages with @anthropic-ai/sdk", () => {
  it("messages.create: a system prompt, the line's model and key (the way the SDK sends its own), the SDK's headers passed on", async () => {
    const { data, response } = await anthropicAt(router)
      .messages.create({
        model: "mixed",
        ...ask,
        system: "Reply with a single JSON object and nothing else.",
        messages: [
          { role: "user", content: 'Describe the city of Lyon as a JSON object with the keys "city" (string) and "country" (string).' },
        ],
      })
      .withResponse();
    expect(response.headers.get("x-linewatch-line")).toBe("c1");
    expect(data.model).toBe("c1-model");
    expect(JSON.parse(data.content[0]?.type === "text" ? data.content[0].text : "")).toMatchObject({ city: "Lyon" });
    const sent = lastRequest("c1");
    expect(JSON.parse(sent.body)).toMatchObject({ model: "c1-model", system: "Reply with a single JSON object and nothing else." });
    expectLineCredential(sent, "c1", "authorization");
    expect(header(sent, "anthropic-version")).toEqual(["2026-10-21"]);
    expect(header(sent, "user-agent")[0]).toMatch(/^Anthropic\/JS /);
    expect(header(sent, "x-stainless-lang")).toEqual(["js"]);
    expect(header(sent, "accept-encoding")).toEqual([]);
  });

  it("messages.create: a tool call", async () => {
    const message = await anthropicAt(router).messages.create({
      model: "mixed",
      max_tokens: 100,
      tools: [{ name: "get_weather", input_schema: { type: "object", properties: {} } }],
      messages: [{ role: "user", content: "Use get_weather for Paris." }],
    });
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content[0]).toMatchObject({ type: "tool_use", name: "get_weather" });
  });

  it("messages.stream: text events and the final message", async () => {
    const stream = anthropicAt(router).messages.stream({
      model: "mixed",
      max_tokens: 300,
      messages: [{ role: "user", content: "In about 100 words, explain why status codes are not enough." }],
    });
    let text = "";
    stream.on("text", (t) => {
      text += t;
    });
    const final = await stream.finalMessage();
    expect(text.length).toBeGreaterThan(300);
    expect(final.content[0]).toMatchObject({ type: "text", text });
  });

  it("messages.countTokens goes to /v1/messages/count_tokens of an Anthropic line", async () => {
    const before = lab.stats("c1").byEndpoint["messages.count_tokens"];
    const count = await anthropicAt(router).messages.countTokens({ model: "mixed", messages: [{ role: "user", content: "x".repeat(40) }] });
    expect(count.input_tokens).toBe(10);
    expect(lab.stats("c1").byEndpoint["messages.count_tokens"]).toBe(before + 1);
  });

  it("an older client's x-api-key and anthropic-version go on as it sent them: the line's key as x-api-key, its version unchanged", async () => {
    const res = await fetch(`${router.url}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": CLIENT_KEY,
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "prompt-caching-2024-07-31",
      },
      body: JSON.stringify({ model: "mixed", ...ask, temperature: 0 }),
    });
    expect(res.status).toBe(200);
    const sent = lastRequest("c1");
    expectLineCredential(sent, "c1", "x-api-key");
    expect(header(sent, "authorization")).toEqual([]);
    expect(header(sent, "anthropic-version")).toEqual(["2023-06-01"]);
    expect(header(sent, "anthropic-beta")).toEqual(["prompt-caching-2024-07-31"]);
  });

  it("a client that names no anthropic-version gets the default one sent", async () => {
    const res = await fetch(`${router.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "mixed", ...ask }),
    });
    expect(res.status).toBe(200);
    expect(header(lastRequest("c1"), "anthropic-version")).toEqual(["2023-06-01"]);
    expect(header(lastRequest("c1"), "x-api-key")).toEqual(["sk-c1"]);
  });

  it("models.list lists the routes in Anthropic's shape", async () => {
    const ids: string[] = [];
    for await (const model of anthropicAt(router).models.list()) ids.push(model.id);
    expect(ids.sort()).toEqual(["chat-only", "closed", "dead", "fixed", "mixed", "spread"]);
  });

  it("a wrong anthropic-version is passed through unchanged, and the line's 400 comes back as BadRequestError, not retried", async () => {
    const [c1, c2] = [requests("c1"), requests("c2")];
    const client = anthropicAt(router, { defaultHeaders: { "anthropic-version": "1999-01-01" } });
    const error = await client.messages.create({ model: "mixed", ...ask }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as Error).message).toContain("unknown version");
    expect(header(lastRequest("c1"), "anthropic-version")).toEqual(["1999-01-01"]);
    expect([requests("c1"), requests("c2")]).toEqual([c1 + 1, c2]);
  });

  it("keeps a session on its line by metadata.user_id", async () => {
    const send = async (user?: string) => {
      const res = await fetch(`${randomRouter.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "anthropic-version": "2026-10-21" },
        body: JSON.stringify({ model: "spread", ...ask, ...(user ? { metadata: { user_id: user } } : {}) }),
      });
      await res.arrayBuffer();
      return res.headers.get("x-linewatch-line");
    };
    for (const user of ["session-a", "session-b", "session-c", "session-d"]) {
      const seen = new Set<string | null>();
      for (let i = 0; i < 6; i++) seen.add(await send(user));
      expect(seen.size, user).toBe(1);
    }
    const spread = new Set<string | null>();
    for (let i = 0; i < 40; i++) spread.add(await send());
    expect(spread).toEqual(new Set(["c1", "c2"]));
  });
});

describe("/v1/responses with openai", () => {
  it("responses.create goes to an openai-responses line, with its model and a bearer key", async () => {
    const { data, response } = await openaiAt(router)
      .responses.create({ model: "mixed", input: "How many minutes from 14:35 to 17:10?" })
      .withResponse();
    expect(response.headers.get("x-linewatch-line")).toBe("r1");
    expect(data.output_text).toBe("155");
    expect(data.model).toBe("r1-model");
    expectLineCredential(lastRequest("r1"), "r1", "authorization");
    expect(header(lastRequest("r1"), "user-agent")[0]).toMatch(/^OpenAI\/JS /);
  });

  it("responses.create with stream: true", async () => {
    const stream = await openaiAt(router).responses.create({
      model: "mixed",
      input: "In about 100 words, explain status codes.",
      stream: true,
    });
    let text = "";
    let last = "";
    for await (const event of stream) {
      last = event.type;
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    expect(last).toBe("response.completed");
    expect(text.length).toBeGreaterThan(300);
  });

  it("chat completions on the same route still go to its openai-chat line", async () => {
    const { response } = await openaiAt(router)
      .chat.completions.create({ model: "mixed", messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(response.headers.get("x-linewatch-line")).toBe("o1");
  });
});

describe("a route and its protocols", () => {
  it("spreads by the table's weights over the request protocol's lines only", async () => {
    const client = anthropicAt(randomRouter);
    const counts = new Map<string, number>();
    const N = 300;
    for (let i = 0; i < N; i++) {
      const { response } = await client.messages.countTokens({ model: "spread", messages: ask.messages }).withResponse();
      const name = response.headers.get("x-linewatch-line") ?? "?";
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(["c1", "c2"]);
    expect((counts.get("c1") ?? 0) / N).toBeGreaterThan(0.65);
    expect((counts.get("c1") ?? 0) / N).toBeLessThan(0.85);
  });

  it("a protocol the route has no line for is the SDK's NotFoundError (protocol_not_served), in each API's shape", async () => {
    const anthropicError = await anthropicAt(router)
      .messages.create({ model: "chat-only", ...ask })
      .catch((e: unknown) => e);
    expect(anthropicError).toBeInstanceOf(Anthropic.NotFoundError);
    expect((anthropicError as InstanceType<typeof Anthropic.NotFoundError>).errorCode).toBe("protocol_not_served");
    expect((anthropicError as Error).message).toContain("anthropic-messages");
    const openaiError = await openaiAt(router)
      .responses.create({ model: "chat-only", input: "hi" })
      .catch((e: unknown) => e);
    expect(openaiError).toBeInstanceOf(OpenAI.NotFoundError);
    expect((openaiError as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("protocol_not_served");
  });

  it("an unknown route, an empty table and lines that all fail are the SDK's typed errors", async () => {
    const unknown = await anthropicAt(router)
      .messages.create({ model: "no-such-route", ...ask })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect((unknown as InstanceType<typeof Anthropic.NotFoundError>).errorCode).toBe("model_not_found");
    const closed = await anthropicAt(router)
      .messages.create({ model: "closed", ...ask })
      .catch((e: unknown) => e);
    expect(closed).toBeInstanceOf(Anthropic.ServiceUnavailableError);
    const dead = await anthropicAt(router)
      .messages.create({ model: "dead", ...ask })
      .catch((e: unknown) => e);
    expect(dead).toBeInstanceOf(Anthropic.InternalServerError);
    expect((dead as InstanceType<typeof Anthropic.InternalServerError>).errorCode).toBe("upstream_unreachable");
    const unknownResponses = await openaiAt(router)
      .responses.create({ model: "no-such-route", input: "hi" })
      .catch((e: unknown) => e);
    expect(unknownResponses).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("bad input in the protocol's own shape: not JSON, no model, a body over the limit", async () => {
    const post = (path: string, body: string) =>
      fetch(`${router.url}/v1${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });
    for (const [path, body, status, code] of [
      ["/messages", "{not json", 400, "invalid_json"],
      ["/messages", JSON.stringify(ask), 400, "missing_model"],
      ["/messages/count_tokens", "[]", 400, "invalid_json"],
    ] as const) {
      const res = await post(path, body);
      expect(res.status).toBe(status);
      expect(await res.json()).toEqual({
        type: "error",
        error: { type: "invalid_request_error", message: expect.any(String), details: { error_code: code } },
      });
    }
    const notJson = await post("/responses", "nope");
    expect(await notJson.json()).toMatchObject({ error: { type: "invalid_request_error", code: "invalid_json" } });
    const big = await anthropicAt(router)
      .messages.create({ model: "mixed", max_tokens: 10, messages: [{ role: "user", content: "x".repeat(70 * 1024) }] })
      .catch((e: unknown) => e);
    expect(big).toBeInstanceOf(Anthropic.ContentTooLargeError);
    const unknownPath = await fetch(`${router.url}/v1/messages/batches`);
    expect(unknownPath.status).toBe(404);
    expect(await unknownPath.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });
});

describe("retries and the in-band check per protocol", () => {
  it.each([
    ["an Anthropic 529 (overloaded)", "c1", "c2", () => lab.setMode("c1", "errors", { status: 529 }), "http_5xx"],
    ["an Anthropic 429", "c1", "c2", () => lab.setMode("c1", "rate-limit", { retryAfterSec: 1 }), "rate_limited"],
    [
      "an Anthropic masked error (a 200 whose body is an error)",
      "c1",
      "c2",
      () => lab.setMode("c1", "long-prompt", { minPromptChars: 0, answer: "masked-error" }),
      "masked_error",
    ],
    ["an empty Anthropic answer", "c1", "c2", () => lab.setMode("c1", "long-prompt", { minPromptChars: 0, answer: "empty" }), "empty"],
    ["a Responses 500", "r1", "r2", () => lab.setMode("r1", "errors", { status: 500 }), "http_5xx"],
    [
      "a Responses masked error",
      "r1",
      "r2",
      () => lab.setMode("r1", "long-prompt", { minPromptChars: 0, answer: "masked-error" }),
      "masked_error",
    ],
  ] as const)("%s is retried once on another line of the protocol", async (_name, first, second, fault, reason) => {
    fault();
    const [a, b] = [requests(first), requests(second)];
    const res = first.startsWith("c")
      ? await fetch(`${router.url}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "anthropic-version": "2026-10-21" },
          body: JSON.stringify({ model: "mixed", ...ask }),
        })
      : await fetch(`${router.url}/v1/responses`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "mixed", input: "hi" }),
        });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-linewatch-line")).toBe(second);
    expect(res.headers.get(RETRY_HEADER)).toBe(reason);
    await res.arrayBuffer();
    expect([requests(first), requests(second)]).toEqual([a + 1, b + 1]);
  });

  it("Anthropic retries stay within the retry budget: with every line overloaded, upstream requests ≤ 1.2 × client requests, the 529s reach the client as they came", async () => {
    lab.setMode("c1", "errors", { status: 529 });
    lab.setMode("c2", "errors", { status: 529 });
    const budgeted = await startRouter({ ...routerOptions(), routes: ["spread"] });
    try {
      const before = requests("c1") + requests("c2");
      const statuses = new Map<number, number>();
      const CLIENT = 100;
      for (let i = 0; i < CLIENT; i++) {
        const res = await fetch(`${budgeted.url}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "anthropic-version": "2026-10-21" },
          body: JSON.stringify({ model: "spread", ...ask }),
        });
        expect(((await res.json()) as { error?: { type?: string } }).error?.type).toBe("overloaded_error");
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
      const upstream = requests("c1") + requests("c2") - before;
      expect(upstream).toBeGreaterThanOrEqual(CLIENT);
      expect(upstream).toBeLessThanOrEqual(1.2 * CLIENT);
      expect([...statuses]).toEqual([[529, CLIENT]]);
    } finally {
      await budgeted.close();
    }
  });

  it("streams are checked as they pass: cut, an error event, a stream without response.completed; never retried", async () => {
    const stream = (path: string, body: Record<string, unknown>) =>
      fetch(`${router.url}/v1${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "anthropic-version": "2026-10-21" },
        body: JSON.stringify({ model: "mixed", stream: true, ...body }),
      });
    const cases = [
      ["c1", "/messages", ask, { at: 0.5 }, "cut"],
      ["c1", "/messages", ask, { at: 0.5, how: "error" as const }, "cut"],
      ["r1", "/responses", { input: "In about 100 words, say hi." }, { at: 0.5 }, "cut"],
      ["r1", "/responses", { input: "In about 100 words, say hi." }, { at: 0.5, how: "error" as const }, "masked_error"],
    ] as const;
    for (const [name, path, body, params, outcome] of cases) {
      lab.setMode(name, "cut", params);
      const before = await liveCount("mixed", name, outcome);
      const c2 = requests(name === "c1" ? "c2" : "r2");
      const res = await stream(path, body);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-linewatch-line")).toBe(name);
      await res.arrayBuffer();
      expect(await liveCount("mixed", name, outcome), `${name} ${JSON.stringify(params)}`).toBe(before + 1);
      expect(requests(name === "c1" ? "c2" : "r2")).toBe(c2);
    }
    lab.setMode("c1", "ok");
    const okBefore = await liveCount("mixed", "c1", "ok");
    await (await stream("/messages", ask)).arrayBuffer();
    expect(await liveCount("mixed", "c1", "ok")).toBe(okBefore + 1);
  });

  it("a stream's bytes are the upstream's, byte for byte (sha256), for Messages and Responses", async () => {
    for (const [path, expected] of [
      ["/messages", ANTHROPIC_BYTES],
      ["/responses", RESPONSES_BYTES],
    ] as const) {
      const res = await fetch(`${router.url}/v1${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "anthropic-version": "2026-10-21" },
        body: JSON.stringify({ model: "fixed", stream: true, ...(path === "/messages" ? ask : { input: "hi" }) }),
      });
      expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(sha(new Uint8Array(await res.arrayBuffer()))).toBe(sha(expected));
    }
    expect(await liveCount("fixed", "fa", "ok")).toBe(1);
    expect(await liveCount("fixed", "fr", "ok")).toBe(1);
  });

  it("reports each protocol's usage tokens: Anthropic's input and output, Responses' input and output", async () => {
    const tokens = async (name: string, direction: string) => {
      const t = await (await fetch(`${router.url}/metrics`)).text();
      return Number(
        new RegExp(`linewatch_router_tokens_total\\{route="fixed",line="${name}",direction="${direction}"\\} (\\d+)`).exec(t)?.[1] ?? 0,
      );
    };
    const before = [
      await tokens("fa", "prompt"),
      await tokens("fa", "completion"),
      await tokens("fr", "prompt"),
      await tokens("fr", "completion"),
    ];
    for (const path of ["/messages", "/responses"]) {
      const body = JSON.stringify({ model: "fixed", stream: true, ...(path === "/messages" ? ask : { input: "hi" }) });
      await (
        await fetch(`${router.url}/v1${path}`, { method: "POST", headers: { "content-type": "application/json" }, body })
      ).arrayBuffer();
    }
    const after = [
      await tokens("fa", "prompt"),
      await tokens("fa", "completion"),
      await tokens("fr", "prompt"),
      await tokens("fr", "completion"),
    ];
    expect(after.map((n, k) => n - (before[k] as number))).toEqual([9, 30, 9, 30]);
  });
});
