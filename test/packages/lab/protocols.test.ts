// The lab speaks every LLM protocol linewatch probes and routes (chat completions, Responses, Anthropic
// Messages), with every fault mode in each: the shipped samples of probes/<protocol>/ go through the
// real adapter (buildProbe → HTTP → parseResponse) and core's scoring, as the prober sends them.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  EMPTY_BASELINE,
  fillTemplate,
  getAdapter,
  NONCE_LENGTH,
  type ParsedResponse,
  type Protocol,
  probeNonce,
  type SampleExpect,
  type ScoredProbe,
  scoreProbe,
} from "@linewatch/core";
import { type Lab, type LabMode, type ModeParams, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";

const LLM_PROTOCOLS = ["openai-chat", "openai-responses", "anthropic-messages"] as const satisfies readonly Protocol[];
type LlmProtocol = (typeof LLM_PROTOCOLS)[number];

interface Sample {
  name: string;
  protocol: LlmProtocol;
  request: Record<string, unknown>;
  expect: SampleExpect;
}

const PROBES = fileURLToPath(new URL("../../../probes", import.meta.url));
function samplesOf(protocol: LlmProtocol): Map<string, Sample> {
  const dir = join(PROBES, protocol);
  const out = new Map<string, Sample>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".yaml"))) {
    const s = parse(readFileSync(join(dir, file), "utf8")) as Sample;
    // The four kinds, named per protocol (`anthropic-json-fields`…): keyed by kind.
    out.set(file.replace(/\.yaml$/, ""), s);
  }
  return out;
}

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ lines: LLM_PROTOCOLS.map((p) => ({ name: p, apiKey: `sk-${p}` })) });
});
afterAll(() => lab.close());
beforeEach(() => {
  for (const p of LLM_PROTOCOLS) lab.setMode(p, "ok");
});

interface Probed {
  status: number | null;
  parsed: ParsedResponse | null;
  scored: ScoredProbe;
  latencyMs: number;
}

/** One probe of `kind` on the protocol's lab line, as the prober sends it, scored cold. */
async function probe(protocol: LlmProtocol, kind: string, opts: { stream?: boolean; timeoutMs?: number } = {}): Promise<Probed> {
  const sample = samplesOf(protocol).get(kind);
  if (!sample) throw new Error(`no ${protocol} sample ${kind}`);
  const nonce = probeNonce(randomBytes(NONCE_LENGTH));
  const adapter = getAdapter(protocol);
  const req = adapter.buildProbe(
    { baseUrl: lab.baseUrl(protocol), model: "lab-model", headers: {}, apiKey: `sk-${protocol}` },
    // A chat stream carries usage only when asked (as a client must ask the real API).
    fillTemplate(
      { ...sample.request, ...(opts.stream && protocol === "openai-chat" ? { stream_options: { include_usage: true } } : {}) },
      { nonce, now: Date.now() },
    ),
    opts.stream === undefined ? {} : { stream: opts.stream },
  );
  const t0 = performance.now();
  let status: number | null = null;
  let text = "";
  try {
    const res = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: AbortSignal.timeout(opts.timeoutMs ?? 5000),
    });
    status = res.status;
    text = await res.text();
  } catch {
    // A timeout: no status, as the prober records it.
  }
  const latencyMs = performance.now() - t0;
  const parsed = status === null ? null : adapter.parseResponse(status, text);
  const ok = parsed?.ok === true ? parsed : null;
  const errorClass =
    status === null ? "timeout" : parsed?.ok ? null : status >= 200 && status < 300 ? (parsed?.errorClass ?? null) : "http_status";
  const scored = scoreProbe({
    expect: sample.expect,
    observation: {
      status,
      errorClass,
      latencyMs,
      content: ok?.content ?? null,
      json: ok?.json ?? null,
      contentHash: ok ? `h:${ok.content}` : null,
      nonce,
    },
    baseline: EMPTY_BASELINE,
  });
  return { status, parsed, scored, latencyMs };
}

const KINDS = ["json-fields", "long-explainer", "nonce-echo", "travel-minutes"] as const;

describe.each(LLM_PROTOCOLS)("lab line speaking %s", (protocol) => {
  const setMode = <M extends LabMode>(mode: M, params?: ModeParams<M>) => lab.setMode(protocol, mode, params);

  it("ships the four samples, each passing in mode ok, streamed and not", async () => {
    expect([...samplesOf(protocol).keys()].sort()).toEqual([...KINDS]);
    for (const kind of KINDS) {
      for (const stream of [false, true]) {
        for (let i = 0; i < 4; i++) {
          const r = await probe(protocol, kind, { stream });
          expect(r.scored.reasons, `${kind} stream=${stream}`).toEqual([]);
          expect(r.scored.passed).toBe(true);
        }
      }
    }
  });

  it("reports usage, finish reason and the answer's id in the protocol's own words", async () => {
    for (const stream of [false, true]) {
      const r = await probe(protocol, "long-explainer", { stream });
      expect(r.parsed).toMatchObject({
        ok: true,
        finishReason: { "openai-chat": "stop", "openai-responses": "completed", "anthropic-messages": "end_turn" }[protocol],
      });
      const p = r.parsed as Extract<ParsedResponse, { ok: true }>;
      expect(p.usage.input).toBeGreaterThan(10);
      expect(p.usage.output).toBeGreaterThan(50);
      expect(p.id).toMatch({ "openai-chat": /^chatcmpl-/, "openai-responses": /^resp_/, "anthropic-messages": /^msg_/ }[protocol]);
    }
  });

  it("truncate: a 200 whose text is cut fails the length check", async () => {
    setMode("truncate", { fraction: 0.3 });
    const r = await probe(protocol, "long-explainer");
    expect(r.status).toBe(200);
    expect(r.scored.passed).toBe(false);
    expect(r.scored.checks.find((c) => c.name === "minLength")?.verdict).toBe("fail");
  });

  it("drop-fields: JSON answers lose keys and usage", async () => {
    setMode("drop-fields", { fields: ["population"] });
    const r = await probe(protocol, "json-fields");
    expect(r.scored.passed).toBe(false);
    expect(r.scored.checks.find((c) => c.name === "requiredFields")?.verdict).toBe("fail");
    expect(r.parsed).toMatchObject({ ok: true, usage: { input: null, output: null } });
  });

  it("stale: the second probe gets the first one's answer, old nonce and all", async () => {
    expect((await probe(protocol, "nonce-echo")).scored.passed).toBe(true);
    setMode("stale");
    const r = await probe(protocol, "nonce-echo");
    expect(r.scored.checks.find((c) => c.name === "nonce")?.verdict).toBe("fail");
  });

  it("downgrade: a smaller model gets the correctness question wrong", async () => {
    setMode("downgrade");
    const r = await probe(protocol, "travel-minutes");
    expect(r.scored.checks.find((c) => c.name === "answer")?.verdict).toBe("fail");
  });

  it("errors and rate-limit: the status, in the protocol's error shape, is a hard failure", async () => {
    const status = protocol === "anthropic-messages" ? 529 : 503;
    setMode("errors", { status });
    const r = await probe(protocol, "travel-minutes");
    expect(r.status).toBe(status);
    expect(r.scored.hardFailure).toBe(true);
    expect(r.parsed).toMatchObject({
      ok: false,
      message: expect.stringContaining(protocol === "anthropic-messages" ? "Overloaded" : "server"),
    });
    setMode("rate-limit", { retryAfterSec: 3 });
    const limited = await probe(protocol, "travel-minutes");
    expect(limited.status).toBe(429);
    expect(limited.scored.hardFailure).toBe(true);
  });

  it("slow and hang: latency added; a hung line is a timeout", async () => {
    setMode("slow", { latencyMs: 250 });
    const slow = await probe(protocol, "travel-minutes");
    expect(slow.scored.passed).toBe(true);
    expect(slow.latencyMs).toBeGreaterThanOrEqual(240);
    setMode("hang");
    const hung = await probe(protocol, "travel-minutes", { timeoutMs: 300 });
    expect(hung.status).toBeNull();
    expect(hung.scored.hardFailure).toBe(true);
  });

  it("empty and masked error (long-prompt with no threshold): a 200 with no text, or an error object in a 200", async () => {
    setMode("long-prompt", { minPromptChars: 0, answer: "empty" });
    const empty = await probe(protocol, "nonce-echo");
    expect(empty.status).toBe(200);
    expect(empty.parsed).toMatchObject({ ok: true, content: "" });
    expect(empty.scored.passed).toBe(false);
    setMode("long-prompt", { minPromptChars: 0, answer: "masked-error" });
    const masked = await probe(protocol, "nonce-echo");
    expect(masked.status).toBe(200);
    expect(masked.parsed).toMatchObject({ ok: false, errorClass: "protocol", message: expect.stringContaining("error in a 2xx body") });
    expect(masked.scored.hardFailure).toBe(true);
  });

  it("cut: a stream ends before its last event (or with an error event); a non-streamed answer stops at the token limit", async () => {
    setMode("cut", { at: 0.5 });
    const ended = await probe(protocol, "long-explainer", { stream: true });
    expect(ended.status).toBe(200);
    expect(ended.parsed).toMatchObject({ ok: false, errorClass: "protocol", message: expect.stringMatching(/stream ended before/) });
    setMode("cut", { at: 0.5, how: "error" });
    const errored = await probe(protocol, "long-explainer", { stream: true });
    expect(errored.parsed).toMatchObject({ ok: false, message: expect.stringMatching(/error in the stream|failed/) });
    setMode("cut");
    const short = await probe(protocol, "long-explainer", { stream: false });
    expect(short.parsed).toMatchObject({
      ok: true,
      finishReason: { "openai-chat": "length", "openai-responses": "max_output_tokens", "anthropic-messages": "max_tokens" }[protocol],
    });
    expect((short.parsed as Extract<ParsedResponse, { ok: true }>).content.length).toBeLessThanOrEqual(20);
    expect(short.scored.passed).toBe(false);
  });

  it("flaky: alternates ok and the fault", async () => {
    setMode("flaky", { fault: "cut" });
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push((await probe(protocol, "travel-minutes", { stream: true })).parsed?.ok);
    expect(outcomes).toEqual([true, false, true, false]);
  });

  it("refuses a request without the line's key, in the protocol's error shape", async () => {
    const path = { "openai-chat": "/chat/completions", "openai-responses": "/responses", "anthropic-messages": "/messages" }[protocol];
    const res = await fetch(`${lab.baseUrl(protocol)}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(401);
    const body = (await res.json()) as Record<string, unknown>;
    if (protocol === "anthropic-messages") expect(body).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    else expect(body).toMatchObject({ error: { code: "invalid_api_key" } });
  });
});

describe("lab: the Anthropic endpoints check what the API checks", () => {
  const send = (headers: Record<string, string>, body: unknown, path = "/messages") =>
    fetch(`${lab.baseUrl("anthropic-messages")}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "sk-anthropic-messages", ...headers },
      body: JSON.stringify(body),
    });
  const ask = { model: "m", max_tokens: 20, messages: [{ role: "user", content: "hi" }] };

  it.each([
    ["no anthropic-version", {}, ask, "anthropic-version: header is required"],
    ["an unknown anthropic-version", { "anthropic-version": "2020-01-01" }, ask, "unknown version"],
    ["temperature under 2026-10-21", { "anthropic-version": "2026-10-21" }, { ...ask, temperature: 0 }, "temperature: Extra inputs"],
    ["no max_tokens", { "anthropic-version": "2026-10-21" }, { model: "m", messages: ask.messages }, "max_tokens"],
  ])("400 for %s", async (_name, headers, body, message) => {
    const res = await send(headers, body);
    expect(res.status).toBe(400);
    const json = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(json).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(json.error.message).toContain(message);
  });

  it("takes temperature under 2023-06-01, the key as x-api-key or a bearer token, and counts tokens", async () => {
    expect((await send({ "anthropic-version": "2023-06-01" }, { ...ask, temperature: 0 })).status).toBe(200);
    const bearer = await send({ "anthropic-version": "2026-10-21", "x-api-key": "", authorization: "Bearer sk-anthropic-messages" }, ask);
    expect(bearer.status).toBe(200);
    const count = await send({ "anthropic-version": "2026-10-21" }, { model: "m", messages: ask.messages }, "/messages/count_tokens");
    expect(await count.json()).toEqual({ input_tokens: 1 });
  });

  it("records what each request sent (headers as sent, and the body)", async () => {
    await send({ "anthropic-version": "2026-10-21", "X-Custom": "yes" }, ask);
    const last = lab.requests("anthropic-messages").at(-1);
    expect(last?.path).toBe("/messages");
    expect(last?.headers).toContainEqual(["X-Custom", "yes"]);
    expect(JSON.parse(last?.body ?? "{}")).toEqual(ask);
  });
});
