// Mode ok: a healthy line answers every shipped sample well, over real HTTP.

import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chat, missedExpectations, nextNonce, post, probeBody, sample, shippedSamples } from "./lab-helpers";

let lab: Lab;
let base: string;

beforeAll(async () => {
  lab = await startLab({
    lines: [
      { name: "healthy", seed: 7 },
      { name: "keyed", apiKey: "sk-lab-secret" },
    ],
  });
  base = lab.baseUrl("healthy");
});
afterAll(() => lab.close());

describe("shipped samples in mode ok", () => {
  const samples = [...shippedSamples().values()];

  it("ships the four samples the lab is built to answer", () => {
    expect(samples.map((s) => s.name).sort()).toEqual(["json-fields", "long-explainer", "nonce-echo", "travel-minutes"]);
  });

  it.each(samples.map((s) => [s.name, s] as const))("%s: 20 probes meet every expectation", async (_name, s) => {
    for (let i = 0; i < 20; i++) {
      const nonce = nextNonce();
      const result = await chat(base, probeBody(s, nonce));
      expect(result.status).toBe(200);
      expect(missedExpectations(s.expect, result, nonce)).toEqual([]);
    }
  });

  it("answers in the OpenAI chat.completion shape, echoing the request's model", async () => {
    const { body } = await chat(base, probeBody(sample("nonce-echo"), nextNonce(), { model: "my-model-x" }));
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "my-model-x",
      choices: [{ index: 0, message: { role: "assistant" }, finish_reason: "stop" }],
    });
    expect(body.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    const usage = body.usage as { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it("json-fields: a compact JSON object with the named keys and types", async () => {
    const { content } = await chat(base, probeBody(sample("json-fields"), nextNonce()));
    const json = JSON.parse(content) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(["city", "country", "population", "landmarks"]);
    expect(json).toMatchObject({ city: "Lyon", country: "France" });
    expect(typeof json.population).toBe("number");
    expect(json.landmarks).toHaveLength(3);
    expect((json.landmarks as unknown[]).every((l) => typeof l === "string")).toBe(true);
    expect(content).not.toMatch(/\s{2}|\n/);
  });

  it("long-explainer: about 600 characters, mentioning status", async () => {
    for (let i = 0; i < 10; i++) {
      const { content } = await chat(base, probeBody(sample("long-explainer"), nextNonce()));
      expect(content.length).toBeGreaterThanOrEqual(540);
      expect(content.length).toBeLessThanOrEqual(660);
      expect(content).toContain("status");
    }
  });

  it("varies its wording, so `varies` sees different content hashes across probes", async () => {
    const contents = new Set<string>();
    for (let i = 0; i < 3; i++) contents.add((await chat(base, probeBody(sample("long-explainer"), nextNonce()))).content);
    expect(contents.size).toBeGreaterThan(1);
  });

  it("echoes a nonce that is not lw- shaped when it follows 'Request id:' or is the last random-looking word", async () => {
    const labelled = await chat(base, { messages: [{ role: "user", content: "Say hello. Request id: Zq81xYtR0p." }] });
    expect(labelled.content).toContain("Zq81xYtR0p");
    const last = await chat(base, { messages: [{ role: "user", content: "Repeat this token exactly: a1b2c3d4e5f6" }] });
    expect(last.content.startsWith("a1b2c3d4e5f6")).toBe(true);
  });

  it("answers other prompts with a plausible sentence", async () => {
    const { status, content } = await chat(base, { messages: [{ role: "user", content: "What should I cook tonight?" }] });
    expect(status).toBe(200);
    expect(content.length).toBeGreaterThan(10);
    expect(content.length).toBeLessThan(300);
  });
});

describe("other endpoints", () => {
  it("POST /v1/completions answers a prompt in the text_completion shape", async () => {
    const res = await post(`${base}/completions`, {
      model: "m",
      prompt: "A train leaves at 14:35 and arrives at 17:10. How many minutes?",
    });
    const body = (await res.json()) as { object: string; choices: { text: string }[]; usage: unknown };
    expect(res.status).toBe(200);
    expect(body.object).toBe("text_completion");
    expect(body.choices[0]?.text).toBe("155");
    expect(body.usage).toBeDefined();
  });

  it("POST /v1/embeddings gives a deterministic unit vector per input", async () => {
    const embed = async (input: unknown, extra = {}) => {
      const res = await post(`${base}/embeddings`, { model: "emb", input, ...extra });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { embedding: number[] }[] }).data.map((d) => d.embedding);
    };
    const [a1, b] = await embed(["alpha", "beta"]);
    const [a2] = await embed("alpha");
    expect(a1).toEqual(a2);
    expect(a1).not.toEqual(b);
    expect(a1).toHaveLength(64);
    expect(Math.hypot(...(a1 as number[]))).toBeCloseTo(1, 3);
    expect((await embed("alpha", { dimensions: 8 }))[0]).toHaveLength(8);
  });

  it("GET /v1/models lists the line's model", async () => {
    const res = await fetch(`${base}/models`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ object: "list", data: [{ id: "lab-model", object: "model" }] });
  });
});

describe("bad requests", () => {
  it.each([
    ["a body that is not JSON", "{not json"],
    ["a JSON array", "[]"],
    ["no messages", JSON.stringify({ model: "m" })],
    ["empty messages", JSON.stringify({ model: "m", messages: [] })],
  ])("%s → 400 invalid_request_error", async (_what, raw) => {
    const res = await post(`${base}/chat/completions`, raw);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; type: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).not.toBe("");
  });

  it("an unknown line or path → 404, a wrong method → 405", async () => {
    expect((await fetch(`${lab.url}/lines/nope/v1/models`)).status).toBe(404);
    expect((await fetch(`${base}/nothing-here`)).status).toBe(404);
    expect((await fetch(`${lab.url}/v1/models`)).status).toBe(404); // no default line in this lab
    expect((await fetch(`${base}/chat/completions`)).status).toBe(405);
  });

  it("a line with an apiKey wants `Authorization: Bearer <key>`; others ignore it", async () => {
    const keyed = lab.baseUrl("keyed");
    const body = probeBody(sample("travel-minutes"), nextNonce());
    const none = await post(`${keyed}/chat/completions`, body);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
    const wrong = await post(`${keyed}/chat/completions`, body, { headers: { authorization: "Bearer sk-wrong" } });
    expect(wrong.status).toBe(401);
    const right = await chat(keyed, body, { headers: { authorization: "Bearer sk-lab-secret" } });
    expect(right.status).toBe(200);
    expect(right.content).toBe("155");
    expect((await chat(base, body, { headers: { authorization: "Bearer anything" } })).status).toBe(200);
  });
});
