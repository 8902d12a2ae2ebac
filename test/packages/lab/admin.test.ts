// The /__lab control surface: switch modes at run time, read counters, add lines.

import { type Lab, LabError, startLab, startLabLine } from "@linewatch/lab";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { chat, nextNonce, post, probeBody, sample } from "./lab-helpers";

let lab: Lab;
beforeEach(async () => {
  lab = await startLab({ lines: [{ name: "one" }, { name: "two" }] });
});
afterEach(() => lab.close());

const setMode = (name: string, body: unknown) => post(`${lab.url}/__lab/lines/${name}/mode`, body);

describe("POST /__lab/lines/<name>/mode", () => {
  it("switches the mode; the next request sees it", async () => {
    const res = await setMode("one", { mode: "errors", status: 503 });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: "one", mode: "errors", setting: { mode: "errors", status: 503, rate: 1 } });
    expect((await chat(lab.baseUrl("one"), probeBody(sample("travel-minutes"), nextNonce()))).status).toBe(503);
    expect(lab.stats("one").mode).toBe("errors");

    expect((await setMode("one", { mode: "ok" })).status).toBe(200);
    expect((await chat(lab.baseUrl("one"), probeBody(sample("travel-minutes"), nextNonce()))).status).toBe(200);
  });

  it.each([
    ["an unknown mode", { mode: "sideways" }],
    ["no mode", { fraction: 0.2 }],
    ["a fraction above 1", { mode: "truncate", fraction: 2 }],
    ["a status that is not an error", { mode: "errors", status: 200 }],
    ["a misspelt parameter", { mode: "slow", latency: 100 }],
    ["flaky of flaky", { mode: "flaky", fault: "flaky" }],
    ["a parameter of another fault", { mode: "flaky", fault: "errors", fraction: 0.5 }],
    ["not JSON", "{mode"],
  ])("rejects %s with 400 and keeps the mode", async (_what, body) => {
    const res = await setMode("one", body);
    expect(res.status).toBe(400);
    const error = ((await res.json()) as { error: { message: string; type: string } }).error;
    expect(error.type).toBe("invalid_request_error");
    expect(error.message).not.toBe("");
    expect(lab.stats("one").mode).toBe("ok");
  });

  it("404 for an unknown line", async () => {
    expect((await setMode("nope", { mode: "ok" })).status).toBe(404);
  });

  it("GET reads the mode", async () => {
    lab.setMode("two", "slow", { latencyMs: 10 });
    const res = await fetch(`${lab.url}/__lab/lines/two/mode`);
    expect(await res.json()).toEqual({ name: "two", mode: "slow", setting: { mode: "slow", latencyMs: 10 } });
  });
});

describe("GET /__lab/lines/<name>", () => {
  it("returns the mode and the counters by endpoint and status", async () => {
    const base = lab.baseUrl("one");
    await chat(base, probeBody(sample("nonce-echo"), nextNonce()));
    await (await post(`${base}/chat/completions`, probeBody(sample("nonce-echo"), nextNonce(), { stream: true }))).text();
    await post(`${base}/chat/completions`, "not json");
    await post(`${base}/embeddings`, { input: "x" });
    await fetch(`${base}/models`);
    const res = await fetch(`${lab.url}/__lab/lines/one`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      name: "one",
      mode: "ok",
      setting: { mode: "ok" },
      requests: 5,
      byEndpoint: {
        "chat.completions": 3,
        completions: 0,
        embeddings: 1,
        models: 1,
        responses: 0,
        messages: 0,
        "messages.count_tokens": 0,
      },
      byStatus: { "200": 4, "400": 1 },
      hung: 0,
      baseUrl: lab.baseUrl("one"),
    });
    expect((await fetch(`${lab.url}/__lab/lines/two`)).status).toBe(200);
    expect(lab.stats("two").requests).toBe(0);
  });

  it("GET /__lab/lines lists every line", async () => {
    const body = (await (await fetch(`${lab.url}/__lab/lines`)).json()) as { lines: { name: string; baseUrl: string; mode: string }[] };
    expect(body.lines).toEqual([
      { name: "one", baseUrl: lab.baseUrl("one"), mode: "ok" },
      { name: "two", baseUrl: lab.baseUrl("two"), mode: "ok" },
    ]);
  });
});

describe("POST /__lab/lines", () => {
  it("adds a line to the running lab", async () => {
    const res = await post(`${lab.url}/__lab/lines`, { name: "three", seed: 3, mode: { mode: "downgrade" } });
    expect(res.status).toBe(201);
    const { baseUrl } = (await res.json()) as { baseUrl: string };
    expect(baseUrl).toBe(`${lab.url}/lines/three/v1`);
    expect((await chat(baseUrl, probeBody(sample("travel-minutes"), nextNonce()))).content).toBe("145");
  });

  it.each([
    ["a duplicate name", { name: "one" }, 409],
    ["a bad name", { name: "has space" }, 400],
    ["no name", { seed: 1 }, 400],
    ["an unknown option", { name: "x", colour: "red" }, 400],
    ["a bad mode", { name: "x", mode: "sideways" }, 400],
    ["a negative latency", { name: "x", baseLatencyMs: -5 }, 400],
  ])("rejects %s", async (_what, body, status) => {
    expect((await post(`${lab.url}/__lab/lines`, body)).status).toBe(status);
    expect(lab.lineNames()).toEqual(["one", "two"]);
  });
});

describe("the function API", () => {
  it("throws LabError on an unknown line or an invalid mode", () => {
    expect(() => lab.setMode("nope", "ok")).toThrow(LabError);
    expect(() => lab.setMode("one", "truncate", { fraction: -1 })).toThrow(/fraction/);
    expect(() => lab.stats("nope")).toThrow(LabError);
    expect(() => lab.addLine({ name: "one" })).toThrow(LabError);
  });
});

describe("a single-line server", () => {
  it("serves /v1 at the root and /__lab/mode for its line", async () => {
    const single = await startLabLine({ seed: 1, apiKey: "k" });
    try {
      expect(single.baseUrl).toBe(`${single.url}/v1`);
      const headers = { authorization: "Bearer k" };
      expect((await chat(single.baseUrl, probeBody(sample("travel-minutes"), nextNonce()), { headers })).content).toBe("155");

      const res = await post(`${single.url}/__lab/mode`, { mode: "downgrade" });
      expect(res.status).toBe(200);
      expect((await chat(single.baseUrl, probeBody(sample("travel-minutes"), nextNonce()), { headers })).content).toBe("145");
      expect((await post(`${single.url}/__lab/mode`, { mode: "nope" })).status).toBe(400);

      single.setMode("rate-limit");
      expect((await chat(single.baseUrl, probeBody(sample("travel-minutes"), nextNonce()), { headers })).status).toBe(429);
      const stats = (await (await fetch(`${single.url}/__lab/line`)).json()) as { mode: string; requests: number };
      expect(stats).toMatchObject({ mode: "rate-limit", requests: 3 });
      expect(single.stats().byStatus).toEqual({ "200": 2, "429": 1 });
      // The same line is also reachable on the many-lines path.
      expect((await fetch(`${single.url}/lines/line/v1/models`, { headers })).status).toBe(429);
    } finally {
      await single.close();
    }
  });

  it("a lab of many lines has no /__lab/mode", async () => {
    expect((await post(`${lab.url}/__lab/mode`, { mode: "ok" })).status).toBe(404);
  });
});
