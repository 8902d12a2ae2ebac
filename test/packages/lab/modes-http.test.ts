// Each mode does what it says, seen from a client over HTTP.

import { type Lab, type LineOptions, startLab } from "@linewatch/lab";
import { afterEach, describe, expect, it } from "vitest";
import { chat, missedExpectations, nextNonce, post, probeBody, sample } from "./lab-helpers";

const labs: Lab[] = [];
async function lab(...lines: LineOptions[]): Promise<Lab> {
  const started = await startLab({ lines });
  labs.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(labs.splice(0).map((l) => l.close()));
});

/** Two labs with the same seed see the same base content; one of them is faulty. */
async function twins(mode: LineOptions["mode"]): Promise<{ healthy: string; faulty: string }> {
  const healthy = await lab({ name: "twin", seed: 99 });
  const faulty = await lab({ name: "twin", seed: 99, mode });
  return { healthy: healthy.baseUrl("twin"), faulty: faulty.baseUrl("twin") };
}

describe("truncate", () => {
  it("cuts the content to the fraction (default 0.3), still 200", async () => {
    const { healthy, faulty } = await twins("truncate");
    for (const name of ["long-explainer", "json-fields", "nonce-echo"]) {
      const nonce = nextNonce();
      const full = await chat(healthy, probeBody(sample(name), nonce));
      const cut = await chat(faulty, probeBody(sample(name), nonce));
      expect(cut.status).toBe(200);
      expect(cut.content).toBe(full.content.slice(0, Math.round(full.content.length * 0.3)));
    }
  });

  it("takes its fraction as a parameter, and usage counts the cut content", async () => {
    const { healthy, faulty } = await twins({ mode: "truncate", fraction: 0.4 });
    const full = await chat(healthy, probeBody(sample("long-explainer"), nextNonce()));
    const cut = await chat(faulty, probeBody(sample("long-explainer"), nextNonce()));
    expect(cut.content.length).toBe(Math.round(full.content.length * 0.4));
    const usage = (b: Record<string, unknown>) => (b.usage as { completion_tokens: number }).completion_tokens;
    expect(usage(cut.body)).toBeLessThan(usage(full.body));
    expect(missedExpectations(sample("long-explainer").expect, cut, "")).toContain(`minLength ${cut.content.length}`);
  });
});

describe("drop-fields", () => {
  it("JSON answers miss fields and the body misses usage", async () => {
    const l = await lab({ name: "a", mode: "drop-fields" });
    for (let i = 0; i < 5; i++) {
      const result = await chat(l.baseUrl("a"), probeBody(sample("json-fields"), nextNonce()));
      expect(result.status).toBe(200);
      const json = JSON.parse(result.content) as Record<string, unknown>;
      const keys = Object.keys(json);
      expect(keys.length).toBeGreaterThanOrEqual(1);
      expect(keys.length).toBeLessThan(4);
      expect(result.body.usage).toBeUndefined();
      expect(missedExpectations(sample("json-fields").expect, result, "")).toContain("field usage.total_tokens");
    }
  });

  it("drops the named fields when given", async () => {
    const l = await lab({ name: "a", mode: { mode: "drop-fields", fields: ["landmarks"] } });
    const { content } = await chat(l.baseUrl("a"), probeBody(sample("json-fields"), nextNonce()));
    expect(Object.keys(JSON.parse(content) as object)).toEqual(["city", "country", "population"]);
  });

  it("leaves prose alone but still drops usage", async () => {
    const nonce = nextNonce();
    const result = await chat((await lab({ name: "a", mode: "drop-fields" })).baseUrl("a"), probeBody(sample("nonce-echo"), nonce));
    expect(result.content).toContain(nonce);
    expect(result.body.usage).toBeUndefined();
  });
});

describe("stale", () => {
  it("replays the earlier answer to the same prompt, ignoring the new nonce", async () => {
    const l = await lab({ name: "a" });
    const base = l.baseUrl("a");
    const first = nextNonce();
    const earlier = await chat(base, probeBody(sample("nonce-echo"), first));
    expect(earlier.content).toContain(first);

    l.setMode("a", "stale");
    for (let i = 0; i < 3; i++) {
      const nonce = nextNonce();
      const replay = await chat(base, probeBody(sample("nonce-echo"), nonce));
      expect(replay.status).toBe(200);
      expect(replay.content).toBe(earlier.content);
      expect(replay.content).not.toContain(nonce);
      expect(replay.body.id).toBe(earlier.body.id);
    }
  });

  it("with nothing cached, answers once and replays that answer after", async () => {
    const base = (await lab({ name: "a", mode: "stale" })).baseUrl("a");
    const contents: string[] = [];
    for (let i = 0; i < 3; i++) contents.push((await chat(base, probeBody(sample("long-explainer"), nextNonce()))).content);
    expect(new Set(contents).size).toBe(1);
    // A different prompt is a different cache entry.
    expect((await chat(base, probeBody(sample("travel-minutes"), nextNonce()))).content).toBe("155");
  });
});

describe("downgrade", () => {
  it("gets the correctness question wrong", async () => {
    const base = (await lab({ name: "a", mode: "downgrade" })).baseUrl("a");
    const result = await chat(base, probeBody(sample("travel-minutes"), nextNonce()));
    expect(result.status).toBe(200);
    expect(result.content).toBe("145");
    expect(missedExpectations(sample("travel-minutes").expect, result, "")).toEqual(["answer 145"]);
  });

  it("writes about half as long, keeps JSON fields and still echoes the nonce", async () => {
    const { healthy, faulty } = await twins("downgrade");
    const long = probeBody(sample("long-explainer"), nextNonce());
    const full = await chat(healthy, long);
    const small = await chat(faulty, long);
    expect(small.content.length).toBeLessThan(full.content.length * 0.6);
    expect(small.content.length).toBeGreaterThan(full.content.length * 0.4);

    const nonce = nextNonce();
    const json = await chat(faulty, probeBody(sample("json-fields"), nonce));
    expect(missedExpectations(sample("json-fields").expect, json, nonce)).toEqual([]);
    const echo = await chat(faulty, probeBody(sample("nonce-echo"), nonce));
    expect(missedExpectations(sample("nonce-echo").expect, echo, nonce)).toEqual([]);
  });
});

describe("slow", () => {
  it("adds at least latencyMs before answering, then answers well", async () => {
    const base = (await lab({ name: "a", mode: { mode: "slow", latencyMs: 300 } })).baseUrl("a");
    const body = probeBody(sample("travel-minutes"), nextNonce());
    await expect(post(`${base}/chat/completions`, body, { signal: AbortSignal.timeout(100) })).rejects.toThrow();
    const started = performance.now();
    const result = await chat(base, body);
    // Timers and performance.now() read different clocks; allow a couple of ms of skew.
    expect(performance.now() - started).toBeGreaterThanOrEqual(298);
    expect(result.content).toBe("155");
  });

  it("baseLatencyMs and a seeded jitter delay every answer", async () => {
    const base = (await lab({ name: "a", baseLatencyMs: 120, latencyJitterMs: 50 })).baseUrl("a");
    const started = performance.now();
    await chat(base, probeBody(sample("travel-minutes"), nextNonce()));
    expect(performance.now() - started).toBeGreaterThanOrEqual(118);
  });
});

describe("errors", () => {
  it("answers the status (default 500) with an OpenAI error body", async () => {
    const l = await lab({ name: "a", mode: "errors" });
    const result = await chat(l.baseUrl("a"), probeBody(sample("nonce-echo"), nextNonce()));
    expect(result.status).toBe(500);
    expect(result.body).toMatchObject({ error: { type: "server_error" } });
    l.setMode("a", "errors", { status: 503 });
    expect((await chat(l.baseUrl("a"), probeBody(sample("nonce-echo"), nextNonce()))).status).toBe(503);
  });

  it("fails a seeded share of requests at a rate below 1", async () => {
    const statuses = async () => {
      const base = (await lab({ name: "a", seed: "rate", mode: { mode: "errors", rate: 0.5, status: 502 } })).baseUrl("a");
      const out: number[] = [];
      for (let i = 0; i < 40; i++) out.push((await chat(base, probeBody(sample("travel-minutes"), "lw-x"))).status);
      return out;
    };
    const first = await statuses();
    expect(new Set(first)).toEqual(new Set([200, 502]));
    const failed = first.filter((s) => s === 502).length;
    expect(failed).toBeGreaterThan(8);
    expect(failed).toBeLessThan(32);
    expect(await statuses()).toEqual(first);
  });
});

describe("rate-limit", () => {
  it("answers 429 with Retry-After", async () => {
    const l = await lab({ name: "a", mode: "rate-limit" });
    const result = await chat(l.baseUrl("a"), probeBody(sample("nonce-echo"), nextNonce()));
    expect(result.status).toBe(429);
    expect(result.headers.get("retry-after")).toBe("20");
    expect(result.body).toMatchObject({ error: { code: "rate_limit_exceeded" } });
    l.setMode("a", "rate-limit", { retryAfterSec: 3 });
    expect((await chat(l.baseUrl("a"), probeBody(sample("nonce-echo"), nextNonce()))).headers.get("retry-after")).toBe("3");
  });
});

describe("hang", () => {
  it("accepts the request and never answers; close() still ends promptly", async () => {
    const l = await lab({ name: "a", mode: "hang" });
    const body = probeBody(sample("nonce-echo"), nextNonce());
    await expect(post(`${l.baseUrl("a")}/chat/completions`, body, { signal: AbortSignal.timeout(200) })).rejects.toThrow();

    // One more left hanging with no timeout of its own: close() must end it.
    const pending = post(`${l.baseUrl("a")}/chat/completions`, body).then(
      () => "answered",
      () => "ended",
    );
    await expect.poll(() => l.stats("a").hung, { timeout: 2000, interval: 10 }).toBe(2);
    const started = performance.now();
    await l.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await pending).toBe("ended");
    expect(l.stats("a")).toMatchObject({ requests: 2, hung: 2, byStatus: {} });
  });

  it("close() also cancels answers still waiting on a slow delay", async () => {
    const l = await lab({ name: "a", mode: { mode: "slow", latencyMs: 60_000 } });
    const pending = post(`${l.baseUrl("a")}/chat/completions`, probeBody(sample("nonce-echo"), nextNonce())).then(
      () => "answered",
      () => "ended",
    );
    await expect.poll(() => l.stats("a").requests, { timeout: 2000, interval: 10 }).toBe(1);
    const started = performance.now();
    await l.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await pending).toBe("ended");
  });
});

describe("flaky", () => {
  it("alternates ok and errors by default", async () => {
    const base = (await lab({ name: "a", mode: "flaky" })).baseUrl("a");
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await chat(base, probeBody(sample("travel-minutes"), nextNonce()))).status);
    expect(statuses).toEqual([200, 500, 200, 500, 200, 500]);
  });

  it("alternates ok and the named fault with its parameters", async () => {
    const l = await lab({ name: "a", mode: { mode: "flaky", fault: "truncate", fraction: 0.1 } });
    const lengths: number[] = [];
    for (let i = 0; i < 4; i++) lengths.push((await chat(l.baseUrl("a"), probeBody(sample("long-explainer"), nextNonce()))).content.length);
    expect(lengths[0]).toBeGreaterThan(500);
    expect(lengths[1]).toBeLessThan(70);
    expect(lengths[2]).toBeGreaterThan(500);
    expect(lengths[3]).toBeLessThan(70);
    expect(l.stats("a").setting).toEqual({ mode: "flaky", fault: { mode: "truncate", fraction: 0.1 } });
  });
});

describe("back to ok", () => {
  it("a line switched back to ok answers well again", async () => {
    const l = await lab({ name: "a", mode: "downgrade" });
    expect((await chat(l.baseUrl("a"), probeBody(sample("travel-minutes"), nextNonce()))).content).toBe("145");
    l.setMode("a", "ok");
    expect((await chat(l.baseUrl("a"), probeBody(sample("travel-minutes"), nextNonce()))).content).toBe("155");
  });
});
