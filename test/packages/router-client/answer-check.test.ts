import { checkJsonAnswer, createWeightedPicker, LineEjector, pickPastEjected, RetryBudget, StreamCheck } from "@linewatch/router-client";
import { describe, expect, it } from "vitest";

const opts = { kind: "chat" as const, cutMinTokens: 16, maxTokens: null };
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const chatBody = (content: unknown, finish = "stop", usage: unknown = { prompt_tokens: 12, completion_tokens: 40 }) => ({
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finish }],
  usage,
});

describe("checkJsonAnswer", () => {
  const cases: [string, Buffer, string][] = [
    ["an answer with text", json(chatBody("Hello there")), "ok"],
    ["empty content", json(chatBody("")), "empty"],
    [
      "null content with a tool call",
      json({ choices: [{ message: { content: null, tool_calls: [{ id: "t" }] }, finish_reason: "tool_calls" }] }),
      "ok",
    ],
    ["null content, no tool call", json({ choices: [{ message: { content: null }, finish_reason: "stop" }] }), "empty"],
    ["no choices at all", json({ choices: [] }), "empty"],
    ["an error object in a 200", json({ error: { message: "quota exceeded", type: "insufficient_quota" } }), "masked_error"],
    ["a body without choices", json({ status: "ok" }), "masked_error"],
    ["not JSON", Buffer.from("<html>Bad gateway</html>"), "masked_error"],
    ["cut by length under the floor", json(chatBody("Hi", "length", { prompt_tokens: 3, completion_tokens: 4 })), "cut"],
    ["length at the floor", json(chatBody("Hi", "length", { prompt_tokens: 3, completion_tokens: 16 })), "ok"],
    ["text completions", json({ choices: [{ text: "Once", finish_reason: "stop" }] }), "ok"],
  ];
  it.each(cases)("%s", (_name, body, outcome) => {
    expect(checkJsonAnswer(body, opts).outcome).toBe(outcome);
  });

  it("a length stop at the client's own max_tokens is not cut", () => {
    const body = json(chatBody("Hi", "length", { prompt_tokens: 3, completion_tokens: 5 }));
    expect(checkJsonAnswer(body, { ...opts, maxTokens: 5 }).outcome).toBe("ok");
  });

  it("reads usage tokens", () => {
    expect(checkJsonAnswer(json(chatBody("Hello")), opts)).toMatchObject({ promptTokens: 12, completionTokens: 40 });
  });

  it("embeddings: data is ok, an empty list is empty", () => {
    const e = { ...opts, kind: "embeddings" as const };
    expect(checkJsonAnswer(json({ data: [{ embedding: [1] }] }), e).outcome).toBe("ok");
    expect(checkJsonAnswer(json({ data: [] }), e).outcome).toBe("empty");
  });
});

function streamOf(events: unknown[], done = true): string {
  return events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + (done ? "data: [DONE]\n\n" : "");
}

function check(text: string, pieces: number, complete = true) {
  const c = new StreamCheck(opts);
  const bytes = Buffer.from(text);
  const size = Math.max(1, Math.ceil(bytes.length / pieces));
  for (let i = 0; i < bytes.length; i += size) c.push(bytes.subarray(i, i + size));
  return c.end(complete);
}

describe("StreamCheck", () => {
  const chunk = (delta: unknown, finish: string | null = null) => ({ choices: [{ index: 0, delta, finish_reason: finish }] });
  const good = streamOf([
    chunk({ content: "Grüße " }),
    chunk({ content: "aus Köln" }),
    chunk({}, "stop"),
    { choices: [], usage: { prompt_tokens: 9, completion_tokens: 30 } },
  ]);

  it("is the same whatever the chunking, down to single bytes (split characters and JSON)", () => {
    for (const pieces of [1, 2, 7, 50, good.length])
      expect(check(good, pieces)).toEqual({ outcome: "ok", promptTokens: 9, completionTokens: 30 });
  });

  it("a stream without a finish reason or [DONE] is cut", () => {
    expect(check(streamOf([chunk({ content: "Hello" })], false), 3).outcome).toBe("cut");
  });

  it("a stream the upstream broke off is cut even after [DONE]-less content", () => {
    expect(check(streamOf([chunk({ content: "Hello" }), chunk({}, "stop")], false), 3, false).outcome).toBe("cut");
  });

  it("a finished stream with no content is empty; an error event is a masked error", () => {
    expect(check(streamOf([chunk({ role: "assistant", content: "" }), chunk({}, "stop")]), 2).outcome).toBe("empty");
    expect(check(streamOf([{ error: { message: "overloaded" } }]), 2).outcome).toBe("masked_error");
  });

  it("handles CRLF line ends and comments", () => {
    const text = `: keep-alive\r\n\r\ndata: ${JSON.stringify(chunk({ content: "Hi" }, "stop"))}\r\n\r\ndata: [DONE]\r\n\r\n`;
    expect(check(text, 5).outcome).toBe("ok");
  });
});

describe("RetryBudget", () => {
  it("allows retries up to 20% of the window's requests, with a floor, and forgets old requests", () => {
    const b = new RetryBudget({ ratio: 0.2, minRetries: 2, windowMs: 10_000, buckets: 10 });
    let t = 0;
    b.request(t);
    expect(b.tryRetry(t)).toBe(true);
    expect(b.tryRetry(t)).toBe(true);
    expect(b.tryRetry(t)).toBe(false); // the floor of 2 is spent
    for (let i = 0; i < 19; i++) b.request(t);
    expect(b.tryRetry(t)).toBe(true); // 20 requests: 4 retries
    expect(b.tryRetry(t)).toBe(true);
    expect(b.tryRetry(t)).toBe(false);
    expect(b.exhausted).toBe(2);
    t += 10_000; // the window slid past all of it
    expect(b.stats(t)).toEqual({ requests: 0, retries: 0 });
    expect(b.tryRetry(t)).toBe(true);
  });

  it("never lets retries pass 20% of a busy window", () => {
    const b = new RetryBudget({ ratio: 0.2, minRetries: 10, windowMs: 10_000, buckets: 10 });
    let retries = 0;
    for (let i = 0; i < 1000; i++) {
      b.request(i * 5);
      if (b.tryRetry(i * 5)) retries++;
    }
    expect(retries).toBeLessThanOrEqual(0.2 * 1000 + 10);
    expect(retries).toBeGreaterThan(150);
  });
});

describe("LineEjector", () => {
  it("ejects a line after 3 failures in a row for a while; a success clears it", () => {
    const e = new LineEjector({ failures: 3, ejectMs: 5_000 });
    e.observe("a", true, 0);
    e.observe("a", true, 1);
    expect(e.ejected(2)).toEqual([]);
    e.observe("a", true, 2);
    expect(e.ejected(3)).toEqual(["a"]);
    expect(e.ejected(5_003)).toEqual([]); // half-open: the next answer decides
    e.observe("a", true, 5_004);
    expect(e.ejected(5_005)).toEqual(["a"]);
    e.observe("a", false, 5_006);
    expect(e.ejected(5_007)).toEqual([]);
  });
});

describe("pickPastEjected", () => {
  const picker = createWeightedPicker([
    { id: "a", weight: 5000 },
    { id: "b", weight: 3000 },
    { id: "c", weight: 2000 },
  ]);
  const fixed = (...xs: number[]) => {
    let i = 0;
    return () => xs[i++ % xs.length] as number;
  };
  const cases: [string, string[], number[], string, string | null][] = [
    ["nothing ejected: the table's pick", [], [0.1], "a", null],
    ["the table's pick is not ejected: kept", ["b"], [0.1], "a", null],
    ["the table's pick is ejected: another line, held back from it", ["a"], [0.1, 0.1], "b", "a"],
    ["the second pick is by weight among the lines left", ["a"], [0.1, 0.9], "c", "a"],
    ["every line ejected: the table's pick still serves, nothing held back", ["a", "b", "c"], [0.6], "b", null],
  ];
  it.each(cases)("%s", (_name, ejected, rolls, line, held) => {
    const pick = pickPastEjected(picker, ejected, fixed(...rolls), undefined);
    expect(pick?.line.id).toBe(line);
    expect(pick?.heldBackFrom?.id ?? null).toBe(held);
  });

  it("gives each line left its weight's share of what is left (w / the weight not ejected), as picking among them would", () => {
    let seed = 7;
    const rng = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const n = 20_000;
    const got = new Map<string, number>();
    let held = 0;
    for (let i = 0; i < n; i++) {
      const p = pickPastEjected(picker, ["a"], rng, undefined);
      got.set(p?.line.id ?? "", (got.get(p?.line.id ?? "") ?? 0) + 1);
      if (p?.heldBackFrom) held += 1;
    }
    expect(got.get("a")).toBeUndefined();
    expect((got.get("b") ?? 0) / n).toBeCloseTo(0.6, 1);
    expect((got.get("c") ?? 0) / n).toBeCloseTo(0.4, 1);
    // Half the requests were the table's for `a`: held back from it.
    expect(held / n).toBeCloseTo(0.5, 1);
  });

  it("with an affinity key, a session of an ejected line moves to the next line of its key and is counted for the ejected one", () => {
    const key = "session-1";
    const own = pickPastEjected(picker, [], Math.random, key);
    expect(own?.heldBackFrom).toBeNull();
    const moved = pickPastEjected(picker, [own?.line.id ?? ""], Math.random, key);
    expect(moved?.heldBackFrom?.id).toBe(own?.line.id);
    expect(moved?.line.id).not.toBe(own?.line.id);
    expect(pickPastEjected(picker, [own?.line.id ?? ""], Math.random, key)?.line.id).toBe(moved?.line.id);
  });
});
