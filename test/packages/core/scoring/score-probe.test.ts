import {
  computeBaseline,
  DEFAULT_WEIGHTS,
  judgeAnswer,
  PASS_SCORE,
  relativeLengthScore,
  type SampleExpect,
  scoreFromComponents,
} from "@linewatch/core";
import { describe, expect, it } from "vitest";
// Not re-exported from @linewatch/core (yet): read from the module itself.
import { CHECK_FLOOR, failedChecks } from "../../../../packages/core/src/scoring/weights";
import { cold, history, NONCE, observe, score, warm } from "./fixtures";

const text = (n: number) => "word ".repeat(Math.ceil(n / 5)).slice(0, n);

describe("weights and pass mark", () => {
  it("are SPEC §4's", () => {
    expect(DEFAULT_WEIGHTS).toEqual({ length: 25, fields: 20, freshness: 20, status: 20, latency: 15 });
    expect(PASS_SCORE).toBe(60);
  });

  it.each([
    [{ length: 1, fields: 1, freshness: 1, status: 1, latency: 1 }, 100],
    [{ length: 0, fields: 0, freshness: 0, status: 0, latency: 0 }, 0],
    [{ length: 0.2, fields: 1, freshness: 1, status: 1, latency: 1 }, 80],
    [{ length: 1, fields: 1, freshness: 0, status: 1, latency: 1 }, 80],
    [{ length: 1 / 3, fields: 1, freshness: 1, status: 1, latency: 1 }, 83.3],
  ])("scoreFromComponents(%o) = %d", (components, expected) => {
    expect(scoreFromComponents(components)).toBe(expected);
  });

  it("takes other weights", () => {
    const c = { length: 0, fields: 1, freshness: 1, status: 1, latency: 1 };
    expect(scoreFromComponents(c, { length: 1, fields: 1, freshness: 0, status: 0, latency: 0 })).toBe(50);
    expect(scoreFromComponents(c, { length: 0, fields: 0, freshness: 0, status: 0, latency: 0 })).toBe(0);
  });
});

describe("length", () => {
  const expect_: SampleExpect = { minLength: 400, maxLength: 1500 };

  it.each([
    ["a normal answer, cold", 600, cold, 1],
    ["below minLength, cold (graded)", 180, cold, 0.45],
    ["above maxLength (graded)", 3000, cold, 0.5],
    ["empty", 0, cold, 0],
    ["a little shorter than usual", 560, warm(610, 2000), 1],
  ])("%s", (_name, n, baseline, expected) => {
    expect(score(expect_, observe(text(n)), baseline).components.length).toBeCloseTo(expected, 3);
  });

  it("calls less than half of the line's median truncation even above minLength", () => {
    const truncated = score(expect_, observe(text(450)), warm(1000, 2000));
    expect(truncated.components.length).toBeLessThan(0.5);
    expect(truncated.reasons).toContain("content 450 chars, below half of this line's median 1000 (truncated?)");
    expect(score(expect_, observe(text(450)), cold).components.length).toBe(1);
  });

  it("gives the brief's example its reason", () => {
    const r = score(
      { minLength: 100 },
      observe(text(180)),
      computeBaseline(history(20, 610, 2000).map((h) => ({ ...h, contentLength: 610 }))),
    );
    expect(r.reasons).toContain("content 180 chars, below half of this line's median 610 (truncated?)");
  });

  it("is graded against the median, not binary", () => {
    const baseline = warm(600, 2000);
    const scores = [600, 450, 400, 300, 250, 200, 100, 20].map((n) => score({}, observe(text(n)), baseline).components.length);
    expect(scores[0]).toBe(1);
    for (let i = 1; i < scores.length; i += 1) expect(scores[i]).toBeLessThan(scores[i - 1] ?? 0);
    expect(new Set(scores).size).toBe(scores.length);
    expect([0, 0.25, 0.5, 0.65, 0.8, 2].map(relativeLengthScore)).toEqual([0, 0.0625, 0.5, 0.75, 1, 1]);
  });

  it("does not call a terse answer truncated next to a wordier usual one", () => {
    expect(score({}, observe("155"), warm(11, 800)).components.length).toBeGreaterThan(0.85);
  });

  it("applies when nothing is expected and there is no baseline yet: 1", () => {
    expect(score({}, observe("x"), cold).components.length).toBe(1);
  });
});

describe("cold start → warm baseline", () => {
  it("blends the line's median in by sample count, without a jump", () => {
    const full = history(20, 1000, 2000);
    const lengths = [0, 1, 2, 3, 4, 5, 10, 20].map(
      (n) => score({ minLength: 400 }, observe(text(450)), computeBaseline(full.slice(0, n))).components.length,
    );
    expect(lengths[0]).toBe(1);
    for (let i = 1; i < lengths.length; i += 1) expect(lengths[i]).toBeLessThanOrEqual(lengths[i - 1] ?? 0);
    // Each extra probe moves it by at most a fifth of the way.
    for (let i = 1; i <= 5; i += 1) expect((lengths[i - 1] ?? 0) - (lengths[i] ?? 0)).toBeLessThanOrEqual(0.2 + 1e-9);
    expect(lengths[5]).toBeCloseTo(lengths[7] ?? 0, 2);
  });

  it("blends the line's own p90 in the same way", () => {
    const full = history(20, 600, 1000).map((h) => ({ ...h, latencyMs: 1000 }));
    const latencies = [0, 1, 3, 5, 20].map(
      (n) => score({}, observe(text(600), { latencyMs: 4000 }), computeBaseline(full.slice(0, n))).components.latency,
    );
    expect(latencies[0]).toBe(1);
    expect(latencies).toEqual([...latencies].sort((a, b) => b - a));
    expect(latencies[3]).toBeLessThan(0.3);
    expect(latencies[4]).toBe(latencies[3]);
  });
});

describe("fields", () => {
  const jsonFields: SampleExpect = {
    requiredFields: ["content.city", "content.country", "content.population", "content.landmarks", "usage.total_tokens"],
  };
  const lyon = { city: "Lyon", country: "France", population: 522250, landmarks: ["Fourvière", "Vieux Lyon", "Place Bellecour"] };
  const { landmarks: _, ...noLandmarks } = lyon;

  it.each([
    ["all present", JSON.stringify(lyon), { usage: { total_tokens: 90 } }, 1, []],
    [
      "in a ```json fence with prose",
      `Here you go:\n\`\`\`json\n${JSON.stringify(lyon, null, 2)}\n\`\`\``,
      { usage: { total_tokens: 90 } },
      1,
      [],
    ],
    ["landmarks missing", JSON.stringify(noLandmarks), { usage: { total_tokens: 90 } }, 0.8, ["missing fields: content.landmarks"]],
    [
      "landmarks empty",
      JSON.stringify({ ...lyon, landmarks: [] }),
      { usage: { total_tokens: 90 } },
      0.8,
      ["missing fields: content.landmarks"],
    ],
    ["usage missing from the body", JSON.stringify(lyon), { id: "x" }, 0.8, ["missing fields: usage.total_tokens"]],
    [
      "answer truncated mid-JSON",
      JSON.stringify(lyon).slice(0, 40),
      { usage: { total_tokens: 90 } },
      0.2,
      [
        "failed check: fields below 0.5",
        "answer is not JSON",
        "missing fields: content.city, content.country, content.population, content.landmarks",
      ],
    ],
  ])("%s", (_name, content, json, expected, reasons) => {
    const r = score(jsonFields, observe(content, { json }));
    expect(r.components.fields).toBeCloseTo(expected, 3);
    expect(r.reasons).toEqual(reasons);
  });

  it("reads array indexes in paths", () => {
    const r = score(
      { requiredFields: ["content.landmarks.2", "choices[0].message.content"] },
      observe(JSON.stringify(lyon), { json: { choices: [{ message: { content: "x" } }] } }),
    );
    expect(r.components.fields).toBe(1);
  });

  it("counts each contains string and the matches pattern as one check", () => {
    const expect_: SampleExpect = { contains: ["status", "content"], matches: "\\bHTTP 200\\b" };
    expect(score(expect_, observe("Status codes like HTTP 200 hide bad content.")).components.fields).toBe(1);
    const r = score(expect_, observe("Status codes hide bad answers."));
    expect(r.components.fields).toBeCloseTo(1 / 3, 3);
    expect(r.reasons).toEqual(["failed check: fields below 0.5", 'does not contain "content"', 'does not match "\\\\bHTTP 200\\\\b"']);
  });

  it("accepts /pattern/flags and ignores a broken pattern", () => {
    expect(score({ matches: "/^lyon$/i" }, observe("LYON")).components.fields).toBe(1);
    const r = score({ matches: "([unclosed" }, observe("anything"));
    expect(r.components.fields).toBe(1);
    expect(r.reasons[0]).toMatch(/not a valid regex/);
  });

  it("is 1 when no field is expected", () => {
    expect(score({}, observe("whatever")).components.fields).toBe(1);
  });
});

describe("freshness", () => {
  it("needs the nonce echoed", () => {
    const r = score({ nonce: true }, observe("A cached answer from last week."));
    expect(r.components.freshness).toBe(0);
    expect(r.reasons).toContain(`nonce ${NONCE} not echoed (cached answer?)`);
    expect(score({ nonce: true }, observe(`${NONCE.toUpperCase()} echoed.`)).components.freshness).toBe(1);
  });

  it.each([
    ["the same hash 3 probes in a row", ["hash:same", "hash:same"], 0],
    ["a different previous hash", ["hash:same", "hash:other"], 1],
    ["only one earlier probe", ["hash:same"], 1],
    ["no history", [], 1],
  ])("varies: %s", (_name, recentHashes, expected) => {
    const baseline = { ...cold, samples: recentHashes.length, recentHashes };
    expect(score({ varies: true }, observe("same"), baseline).components.freshness).toBe(expected);
  });

  it("explains a stale cache", () => {
    const r = score({ varies: true }, observe("same"), { ...cold, samples: 2, recentHashes: ["hash:same", "hash:same"] });
    expect(r.reasons).toContain("same answer 3 probes in a row (hash hash:same): stale cache?");
  });

  it.each([
    ["155", "exact"],
    ["155.", "exact"],
    [" **155** ", "exact"],
    ["155 minutes", "exact"],
    ["The journey takes 155 minutes.", "exact"],
    ["145", "wrong"],
    ["1550", "wrong"],
    ["", "wrong"],
    ["From 14:35 to 17:10 is 2 hours and 35 minutes, and 2 × 60 + 35 gives 155 minutes in total.", "buried"],
  ] as const)("answer 155 vs %j: %s", (content, verdict) => {
    expect(judgeAnswer(content, "155")).toBe(verdict);
  });

  it("drops a lot for a wrong answer, half for a buried one", () => {
    const wrong = score({ answer: "155" }, observe("145"));
    expect(wrong.components.freshness).toBe(0);
    expect(wrong.reasons).toContain('wrong answer: expected "155", got "145"');
    expect(
      score({ answer: "155" }, observe("It is 2 hours 35 minutes, that is 155 minutes, counting from 14:35 to 17:10.")).components
        .freshness,
    ).toBe(0.5);
    expect(score({ answer: "New York" }, observe("new-york!")).components.freshness).toBe(1);
  });

  it("is 1 when no freshness check applies", () => {
    expect(score({}, observe("anything")).components.freshness).toBe(1);
  });
});

describe("status", () => {
  it("is 1 for a 2xx with an answer and 0 for a 2xx without one", () => {
    expect(score({}, observe("ok", { status: 201 })).components.status).toBe(1);
    const r = score({}, observe(null));
    expect(r.components.status).toBe(0);
    expect(r.hardFailure).toBe(false);
    expect(r.reasons).toContain("2xx response without an answer");
  });
});

describe("latency", () => {
  it.each([
    [5000, 1],
    [6000, 1],
    [9000, 0.5],
    [12_000, 0],
    [60_000, 0],
  ])("%d ms against maxLatencyMs 6000 → %d", (latencyMs, expected) => {
    expect(score({ maxLatencyMs: 6000 }, observe("ok", { latencyMs })).components.latency).toBeCloseTo(expected, 3);
  });

  it("is graded against the line's own p90", () => {
    const baseline = warm(600, 1000);
    const at = (latencyMs: number) => score({}, observe(text(600), { latencyMs }), baseline).components.latency;
    expect(at(900)).toBe(1);
    expect(at(1500)).toBe(1);
    expect(at(2500)).toBeLessThan(1);
    expect(at(3500)).toBeLessThan(at(2500));
    expect(at(10_000)).toBe(0);
    expect(score({}, observe(text(600), { latencyMs: 3000 }), baseline).reasons[0]).toMatch(
      /^took 3000 ms, much slower than this line's p90 1\d{3} ms$/,
    );
  });

  it("finds much faster and much shorter than usual suspicious, not good", () => {
    const baseline = warm(610, 2400);
    const suspicious = score({}, observe(text(150), { latencyMs: 300 }), baseline);
    expect(suspicious.components.latency).toBeLessThanOrEqual(0.2);
    expect(suspicious.reasons.at(-1)).toMatch(/much faster and shorter than usual .*suspicious/);
    expect(score({}, observe(text(600), { latencyMs: 300 }), baseline).components.latency).toBe(1);
    expect(score({}, observe(text(150), { latencyMs: 2000 }), baseline).components.latency).toBe(1);
    expect(score({}, observe(text(150), { latencyMs: 300 }), cold).components.latency).toBe(1);
  });
});

describe("hard failures", () => {
  it.each([
    ["a timeout", observe(null, { status: null, errorClass: "timeout", latencyMs: 10_000 }), "timed out after 10000 ms"],
    ["a connect error", observe(null, { status: null, errorClass: "connect" }), "connect error"],
    ["a 503", observe(null, { status: 503, errorClass: "http_status" }), "HTTP 503"],
    ["a 429 without an error class", observe("rate limited", { status: 429 }), "HTTP 429"],
    [
      "a 200 with an unreadable body",
      observe(null, { errorClass: "parse", errorMessage: "body is not JSON" }),
      "unparseable response body: body is not JSON",
    ],
    ["no status at all", observe("x", { status: null }), "no response"],
  ])("%s scores 0 with every component 0", (_name, observation, reason) => {
    const r = score({ minLength: 10, nonce: true }, observation, warm(600, 1000));
    expect(r).toMatchObject({
      score: 0,
      passed: false,
      hardFailure: true,
      components: { length: 0, fields: 0, freshness: 0, status: 0, latency: 0 },
      reasons: [reason],
    });
  });
});

describe("pass", () => {
  it("passes at 60 and above without a hard failure or a failed check", () => {
    expect(score({ answer: "155" }, observe("155"))).toMatchObject({ score: 100, passed: true, reasons: [] });
    // Degraded but every component at or above CHECK_FLOOR: the buried answer scores 0.5.
    const buried = score({ answer: "155" }, observe("The fast train from Paris to Lyon takes about 155 minutes on most days."));
    expect(buried.components.freshness).toBe(0.5);
    expect(buried.score).toBe(90);
    expect(buried.passed).toBe(true);
    // 80 would clear the pass mark, but the wrong answer is a failed check.
    const wrong = score({ answer: "155" }, observe("145"));
    expect(wrong.score).toBe(80);
    expect(wrong.passed).toBe(false);
    expect(wrong.reasons).toEqual(["failed check: freshness below 0.5", 'wrong answer: expected "155", got "145"']);
    const bad = score({ answer: "155", minLength: 30, nonce: true }, observe("145", { latencyMs: 100 }));
    expect(bad.score).toBeLessThan(PASS_SCORE);
    expect(bad.passed).toBe(false);
  });

  it("reports the content length in code points", () => {
    expect(score({}, observe("Lyon 🦁 里昂")).contentLength).toBe(9);
  });
});

describe("failed check: a component below CHECK_FLOOR fails the probe whatever the score", () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `k${i}x`);
  const LONG_155 = "The fast train from Paris to Lyon takes about 155 minutes on most days.";

  it("is 0.5", () => {
    expect(CHECK_FLOOR).toBe(0.5);
  });

  it.each([
    ["all at 1", { length: 1, fields: 1, freshness: 1, status: 1, latency: 1 }, []],
    ["all at the floor", { length: 0.5, fields: 0.5, freshness: 0.5, status: 0.5, latency: 0.5 }, []],
    ["one just below", { length: 1, fields: 0.49, freshness: 1, status: 1, latency: 1 }, ["fields"]],
    [
      "several, in COMPONENT_NAMES order",
      { length: 0.1, fields: 1, freshness: 0, status: 1, latency: 0.499 },
      ["length", "freshness", "latency"],
    ],
    ["all at 0", { length: 0, fields: 0, freshness: 0, status: 0, latency: 0 }, ["length", "fields", "freshness", "status", "latency"]],
  ])("failedChecks: %s", (_name, components, expected) => {
    expect(failedChecks(components)).toEqual(expected);
  });

  // Each component at 0.49 (freshness only takes 0, 0.5 or 1: 0) with the others at 1.
  it.each([
    ["length 0.49", { minLength: 100 }, observe("x".repeat(49)), "length", 0.49],
    ["fields 0.49", { contains: words(100) }, observe(words(49).join(" ")), "fields", 0.49],
    ["freshness 0 (wrong answer)", { answer: "155" }, observe("145"), "freshness", 0],
    ["latency 0.49", { maxLatencyMs: 1000 }, observe("ok", { latencyMs: 1510 }), "latency", 0.49],
  ] as const)("%s: score ≥ 60 but fails, and the reason names the check", (_name, expect_, observation, name, value) => {
    const r = score(expect_, observation);
    expect(r.components[name]).toBe(value);
    expect(failedChecks(r.components)).toEqual([name]);
    expect(r.score).toBeGreaterThanOrEqual(PASS_SCORE);
    expect(r.hardFailure).toBe(false);
    expect(r.passed).toBe(false);
    expect(r.reasons[0]).toBe(`failed check: ${name} below 0.5`);
    expect(r.reasons.length).toBeGreaterThan(1); // the component's own reason follows
  });

  // The same components exactly at the floor pass.
  it.each([
    ["length 0.5", { minLength: 100 }, observe("x".repeat(50)), "length"],
    ["fields 0.5", { contains: words(2) }, observe("k0x"), "fields"],
    ["freshness 0.5 (answer buried in a long answer)", { answer: "155" }, observe(LONG_155), "freshness"],
    ["latency 0.5", { maxLatencyMs: 1000 }, observe("ok", { latencyMs: 1500 }), "latency"],
  ] as const)("%s: passes", (_name, expect_, observation, name) => {
    const r = score(expect_, observation);
    expect(r.components[name]).toBe(CHECK_FLOOR);
    expect(r.passed).toBe(true);
    expect(r.reasons.some((x) => x.startsWith("failed check"))).toBe(false);
  });

  it("passes with every graded component at the floor and the score exactly 60", () => {
    // status is 0 or 1; the other four sit at 0.5: 20 + 0.5 × 80 = 60.
    const expect_: SampleExpect = { minLength: 2 * LONG_155.length, contains: ["train", "plane"], answer: "155", maxLatencyMs: 1000 };
    const r = score(expect_, observe(LONG_155, { latencyMs: 1500 }));
    expect(r.components).toEqual({ length: 0.5, fields: 0.5, freshness: 0.5, status: 1, latency: 0.5 });
    expect(r.score).toBe(PASS_SCORE);
    expect(r.passed).toBe(true);
    expect(r.reasons.some((x) => x.startsWith("failed check"))).toBe(false);
    // A hair slower and latency fails its check (and the score drops under 60 too).
    const slower = score(expect_, observe(LONG_155, { latencyMs: 1510 }));
    expect(slower.passed).toBe(false);
    expect(slower.reasons[0]).toBe("failed check: latency below 0.5");
  });

  it("names every failed check in one reason, first", () => {
    // Wrong answer and too slow: 100 − 20 − 15 = 65, above the pass mark.
    const r = score({ answer: "155", maxLatencyMs: 1000 }, observe("145", { latencyMs: 2500 }));
    expect(r.score).toBe(65);
    expect(r.passed).toBe(false);
    expect(r.reasons[0]).toBe("failed check: freshness, latency below 0.5");
    expect(r.reasons.filter((x) => x.startsWith("failed check"))).toHaveLength(1);
  });

  it("adds no failed-check reason to a hard failure", () => {
    const r = score({ answer: "155" }, observe(null, { status: 503, errorClass: "http_status" }));
    expect(r.passed).toBe(false);
    expect(r.reasons).toEqual(["HTTP 503"]);
  });
});
