import {
  type CheckName,
  type CheckVerdict,
  computeBaseline,
  DEFAULT_WEIGHTS,
  FAILED_CHECK_SCORE,
  failedCheckNames,
  judgeAnswer,
  PASS_SCORE,
  relativeLengthScore,
  type SampleExpect,
  type ScoredProbe,
  scoreFromComponents,
} from "@linewatch/core";
import { describe, expect, it } from "vitest";
import { cold, history, NONCE, observe, score, warm } from "./fixtures";

const text = (n: number) => "word ".repeat(Math.ceil(n / 5)).slice(0, n);
/** A probe's checks as [name, verdict] pairs, in the order they were made. */
const verdicts = (r: ScoredProbe): [CheckName, CheckVerdict][] => r.checks.map((c) => [c.name, c.verdict]);

describe("weights and pass mark", () => {
  it("are docs/scoring.md's", () => {
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

  // Any one missing required field fails the requiredFields check; the component stays the share met.
  it.each([
    ["all present", JSON.stringify(lyon), { usage: { total_tokens: 90 } }, 1, "pass", []],
    [
      "in a ```json fence with prose",
      `Here you go:\n\`\`\`json\n${JSON.stringify(lyon, null, 2)}\n\`\`\``,
      { usage: { total_tokens: 90 } },
      1,
      "pass",
      [],
    ],
    [
      "landmarks missing",
      JSON.stringify(noLandmarks),
      { usage: { total_tokens: 90 } },
      0.8,
      "fail",
      ["failed check: requiredFields", "missing fields: content.landmarks"],
    ],
    [
      "landmarks empty",
      JSON.stringify({ ...lyon, landmarks: [] }),
      { usage: { total_tokens: 90 } },
      0.8,
      "fail",
      ["failed check: requiredFields", "missing fields: content.landmarks"],
    ],
    [
      "usage missing from the body",
      JSON.stringify(lyon),
      { id: "x" },
      0.8,
      "fail",
      ["failed check: requiredFields", "missing fields: usage.total_tokens"],
    ],
    [
      "answer truncated mid-JSON",
      JSON.stringify(lyon).slice(0, 40),
      { usage: { total_tokens: 90 } },
      0.2,
      "fail",
      [
        "failed check: requiredFields",
        "answer is not JSON",
        "missing fields: content.city, content.country, content.population, content.landmarks",
      ],
    ],
  ] as const)("%s", (_name, content, json, expected, verdict, reasons) => {
    const r = score(jsonFields, observe(content, { json }));
    expect(r.components.fields).toBeCloseTo(expected, 3);
    expect(r.reasons).toEqual(reasons);
    expect(verdicts(r)).toEqual([["requiredFields", verdict]]);
    expect(r.passed).toBe(verdict === "pass");
    if (verdict === "fail") expect(r.score).toBeLessThanOrEqual(FAILED_CHECK_SCORE);
  });

  it("names every missing field in the check's detail", () => {
    const r = score(jsonFields, observe(JSON.stringify(noLandmarks), { json: { id: "x" } }));
    expect(r.checks).toEqual([{ name: "requiredFields", verdict: "fail", detail: "missing content.landmarks, usage.total_tokens" }]);
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
    expect(r.reasons).toEqual(["failed check: contains, matches", 'does not contain "content"', 'does not match "\\\\bHTTP 200\\\\b"']);
    expect(verdicts(r)).toEqual([
      ["contains", "fail"],
      ["matches", "fail"],
    ]);
  });

  it("fails the contains check for one absent string of two", () => {
    const r = score({ contains: ["status", "content"] }, observe("Status codes say little."));
    expect(r.components.fields).toBe(0.5);
    expect(r.checks).toEqual([{ name: "contains", verdict: "fail", detail: 'lacks "content"' }]);
    expect(r.passed).toBe(false);
  });

  it("accepts /pattern/flags and ignores a broken pattern", () => {
    expect(score({ matches: "/^lyon$/i" }, observe("LYON")).components.fields).toBe(1);
    const r = score({ matches: "([unclosed" }, observe("anything"));
    expect(r.components.fields).toBe(1);
    expect(r.reasons[0]).toMatch(/not a valid regex/);
    // The sample is broken, not the line: the check says so and the probe passes.
    expect(verdicts(r)).toEqual([["matches", "broken"]]);
    expect(r).toMatchObject({ score: 100, passed: true });
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
    expect(verdicts(r)).toEqual([["nonce", "fail"]]);
    const echoed = score({ nonce: true }, observe(`${NONCE.toUpperCase()} echoed.`));
    expect(echoed.components.freshness).toBe(1);
    expect(verdicts(echoed)).toEqual([["nonce", "pass"]]);
  });

  it.each([
    ["the same hash 3 probes in a row", ["hash:same", "hash:same"], 0, "fail"],
    ["a different previous hash", ["hash:same", "hash:other"], 1, "pass"],
    ["only one earlier probe", ["hash:same"], 1, "pass"],
    ["no history", [], 1, "pass"],
  ] as const)("varies: %s", (_name, recentHashes, expected, verdict) => {
    const baseline = { ...cold, samples: recentHashes.length, recentHashes: [...recentHashes] };
    const r = score({ varies: true }, observe("same"), baseline);
    expect(r.components.freshness).toBe(expected);
    expect(verdicts(r)).toEqual([["varies", verdict]]);
    expect(r.passed).toBe(verdict === "pass");
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

  it("drops a lot for a wrong answer (a failed check), half for a buried one (a passed check)", () => {
    const wrong = score({ answer: "155" }, observe("145"));
    expect(wrong.components.freshness).toBe(0);
    expect(wrong.reasons).toContain('wrong answer: expected "155", got "145"');
    expect(wrong.checks).toEqual([{ name: "answer", verdict: "fail", detail: 'expected "155", got "145"' }]);
    const buried = score({ answer: "155" }, observe("It is 2 hours 35 minutes, that is 155 minutes, counting from 14:35 to 17:10."));
    expect(buried.components.freshness).toBe(0.5);
    expect(verdicts(buried)).toEqual([["answer", "pass"]]);
    expect(score({ answer: "New York" }, observe("new-york!")).components.freshness).toBe(1);
  });

  it("cannot compare an expected answer with a JSON answer: the answer check is broken, not failed", () => {
    const r = score({ answer: "155" }, observe('{"minutes": 145}'));
    expect(verdicts(r)).toEqual([["answer", "broken"]]);
    expect(r.components.freshness).toBe(1);
    expect(r).toMatchObject({ score: 100, passed: true });
    expect(r.reasons).toEqual(["the sample's expected answer cannot be checked against a JSON answer (ignored)"]);
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
    // No answer is an empty answer: the content check fails the probe.
    expect(r.checks).toEqual([{ name: "content", verdict: "fail", detail: "empty answer" }]);
    expect(r.passed).toBe(false);
  });
});

describe("latency", () => {
  it.each([
    [5000, 1],
    [6000, 1],
    [9000, 0.5],
    [12_000, 0],
    [60_000, 0],
  ])("%d ms against maxLatencyMs 6000 → %d, and the probe still passes", (latencyMs, expected) => {
    const r = score({ maxLatencyMs: 6000 }, observe("ok", { latencyMs }));
    expect(r.components.latency).toBeCloseTo(expected, 3);
    // Latency is not a check: a right answer passes however slow it was (below the timeout).
    expect(r.checks).toEqual([]);
    expect(r.passed).toBe(true);
    expect(r.score).toBeCloseTo(100 - 15 * (1 - expected), 1);
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
      checks: [],
      reasons: [reason],
    });
  });
});

describe("pass", () => {
  it("passes at 60 and above without a hard failure or a failed check", () => {
    expect(score({ answer: "155" }, observe("155"))).toMatchObject({
      score: 100,
      passed: true,
      checks: [{ name: "answer", verdict: "pass" }],
      reasons: [],
    });
    // Degraded but no check failed: the buried answer scores 0.5 and passes its check.
    const buried = score({ answer: "155" }, observe("The fast train from Paris to Lyon takes about 155 minutes on most days."));
    expect(buried.components.freshness).toBe(0.5);
    expect(buried.score).toBe(90);
    expect(buried.passed).toBe(true);
    // 80 by its components, but the wrong answer is a failed check: capped at 40 and failed.
    const wrong = score({ answer: "155" }, observe("145"));
    expect(scoreFromComponents(wrong.components)).toBe(80);
    expect(wrong.score).toBe(FAILED_CHECK_SCORE);
    expect(wrong.passed).toBe(false);
    expect(wrong.reasons).toEqual(["failed check: answer", 'wrong answer: expected "155", got "145"']);
    const bad = score({ answer: "155", minLength: 30, nonce: true }, observe("145", { latencyMs: 100 }));
    expect(bad.score).toBeLessThan(PASS_SCORE);
    expect(bad.passed).toBe(false);
    expect(failedCheckNames(bad.checks)).toEqual(["minLength", "nonce", "answer"]);
  });

  it("reports the content length in code points", () => {
    expect(score({}, observe("Lyon 🦁 里昂")).contentLength).toBe(9);
  });
});

describe("checks: a failed check fails the probe whatever its components, and caps its score", () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `k${i}x`);
  // 70 chars, "155" buried in it (freshness 0.5, the answer check passes).
  const LONG_155 = "The fast train from Paris to Lyon takes about 155 minutes on most days";

  it("caps at 40, under the pass mark", () => {
    expect(FAILED_CHECK_SCORE).toBe(40);
    expect(FAILED_CHECK_SCORE).toBeLessThan(PASS_SCORE);
  });

  // Each one just on the wrong side of its check, with the others right: the components alone
  // would score well above 60 (the old component floor let several of these pass).
  it.each([
    ["one char below minLength", { minLength: 100 }, observe("x".repeat(99)), "minLength", "99 chars, below minLength 100"],
    ["half of minLength", { minLength: 100 }, observe("x".repeat(50)), "minLength", "50 chars, below minLength 100"],
    ["one of 100 contains strings absent", { contains: words(100) }, observe(words(99).join(" ")), "contains", 'lacks "k99x"'],
    ["one of two contains strings absent", { contains: words(2) }, observe("k0x"), "contains", 'lacks "k1x"'],
    ["a pattern miss", { matches: "^\\d+$" }, observe("about 155"), "matches", 'does not match "^\\\\d+$"'],
    ["a wrong answer", { answer: "155" }, observe("145"), "answer", 'expected "155", got "145"'],
    ["a missing nonce", { nonce: true }, observe("an answer without it"), "nonce", `nonce ${NONCE} not echoed (cached answer?)`],
  ] as const)("%s: fails its check and the probe, at most 40", (_name, expect_, observation, name, detail) => {
    const r = score(expect_, observation);
    expect(scoreFromComponents(r.components)).toBeGreaterThanOrEqual(PASS_SCORE);
    expect(r.checks).toEqual([{ name, verdict: "fail", detail }]);
    expect(r.score).toBe(FAILED_CHECK_SCORE);
    expect(r.hardFailure).toBe(false);
    expect(r.passed).toBe(false);
    expect(r.reasons[0]).toBe(`failed check: ${name}`);
    expect(r.reasons.length).toBeGreaterThan(1); // the component's own reason follows
  });

  it("keeps a weighted score already under 40", () => {
    // Empty: length, fields and freshness at 0, 35 by the weights.
    const r = score({ answer: "155", contains: ["train"] }, observe(""), cold);
    expect(failedCheckNames(r.checks)).toEqual(["content", "contains", "answer"]);
    expect(r.score).toBe(35);
    expect(r.score).toBe(scoreFromComponents(r.components));
  });

  // The same expectations just met pass, whatever the component says.
  it.each([
    ["exactly minLength", { minLength: 100 }, observe("x".repeat(100)), "minLength"],
    ["every contains string", { contains: words(2) }, observe("k0x k1x"), "contains"],
    ["the answer buried in a long answer (freshness 0.5)", { answer: "155" }, observe(LONG_155), "answer"],
    ["the nonce echoed", { nonce: true }, observe(`${NONCE}: fresh`), "nonce"],
  ] as const)("%s: passes", (_name, expect_, observation, name) => {
    const r = score(expect_, observation);
    expect(r.checks).toEqual([{ name, verdict: "pass" }]);
    expect(r.passed).toBe(true);
    expect(r.reasons.some((x) => x.startsWith("failed check"))).toBe(false);
  });

  it("does not count maxLength or latency as checks: they lower the score only", () => {
    const r = score({ maxLength: 10, maxLatencyMs: 1000 }, observe("x".repeat(40), { latencyMs: 1500 }));
    expect(r.components).toMatchObject({ length: 0.25, latency: 0.5 });
    expect(r.checks).toEqual([]);
    expect(r.score).toBe(73.8); // 100 − 25 × 0.75 − 15 × 0.5 = 73.75, rounded to 0.1
    expect(r.passed).toBe(true);
  });

  it("passes with no failed check and the score exactly 60, fails just below on the score alone", () => {
    // length 28/70 = 0.4, freshness 0.5 (buried), latency 0 (twice the limit): 10 + 20 + 10 + 20 + 0 = 60.
    const expect_: SampleExpect = { maxLength: 28, contains: ["train"], answer: "155", maxLatencyMs: 1000 };
    const r = score(expect_, observe(LONG_155, { latencyMs: 2000 }));
    expect(r.components).toEqual({ length: 0.4, fields: 1, freshness: 0.5, status: 1, latency: 0 });
    expect(r.score).toBe(PASS_SCORE);
    expect(failedCheckNames(r.checks)).toEqual([]);
    expect(r.passed).toBe(true);
    // One char less of maxLength (length 0.386): 59.7, no check failed, and the probe fails on its score.
    const lower = score({ ...expect_, maxLength: 27 }, observe(LONG_155, { latencyMs: 2000 }));
    expect(lower.score).toBe(59.7);
    expect(failedCheckNames(lower.checks)).toEqual([]);
    expect(lower.passed).toBe(false);
    expect(lower.reasons.some((x) => x.startsWith("failed check"))).toBe(false);
  });

  it("names every failed check in one reason, first, in the order they were made", () => {
    // Wrong answer, "train" absent, no nonce, and too slow (which is not a check).
    const r = score({ answer: "155", contains: ["train"], nonce: true, maxLatencyMs: 1000 }, observe("145", { latencyMs: 2500 }));
    expect(r.passed).toBe(false);
    expect(r.reasons[0]).toBe("failed check: contains, nonce, answer");
    expect(r.reasons.filter((x) => x.startsWith("failed check"))).toHaveLength(1);
  });

  it("adds no failed-check reason to a hard failure", () => {
    const r = score({ answer: "155" }, observe(null, { status: 503, errorClass: "http_status" }));
    expect(r.passed).toBe(false);
    expect(r.checks).toEqual([]);
    expect(r.reasons).toEqual(["HTTP 503"]);
  });
});
