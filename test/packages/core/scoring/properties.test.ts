// Properties that hold for any input, checked with fast-check.
import {
  type Baseline,
  CHECK_NAMES,
  CHECK_VERDICTS,
  COMPONENT_NAMES,
  computeBaseline,
  ERROR_CLASSES,
  FAILED_CHECK_SCORE,
  failedCheckNames,
  getAdapter,
  judgeAnswer,
  PASS_SCORE,
  PEER_LENGTH_SHARE,
  PROTOCOLS,
  type ProbeObservation,
  type SampleExpect,
  type ScoreComponents,
  type ScoredProbe,
  type ScoreProbeInput,
  scoreFromComponents,
  scoreProbe,
} from "@linewatch/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const anyNumber = fc.oneof(
  fc.double({ noNaN: false }),
  fc.integer({ min: -10, max: 100_000 }),
  fc.constantFrom(0, -1, Number.NaN, Number.POSITIVE_INFINITY),
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const word = fc.string({ maxLength: 12 });

const sampleExpect: fc.Arbitrary<SampleExpect> = fc.record(
  {
    minLength: anyNumber,
    maxLength: anyNumber,
    requiredFields: fc.array(
      fc.oneof(
        word,
        word.map((w) => `content.${w}`),
        fc.constantFrom("usage.total_tokens", "content.city", "content"),
      ),
      { maxLength: 5 },
    ),
    contains: fc.array(word, { maxLength: 3 }),
    matches: fc.oneof(word, fc.constantFrom("\\d+", "/^lyon$/i", "(", "[a-")),
    answer: word,
    nonce: fc.boolean(),
    varies: fc.boolean(),
    maxLatencyMs: anyNumber,
  },
  { requiredKeys: [] },
);

const content = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.constantFrom('{"city":"Lyon","landmarks":[]}', '```json\n{"city": "Lyon"}\n```', "155", "", "lw-abc echoed"),
);

const observation: fc.Arbitrary<ProbeObservation> = fc.record({
  status: fc.oneof(fc.constant(null), fc.constant(200), fc.integer({ min: 100, max: 599 })),
  errorClass: fc.oneof(fc.constant(null), fc.constant(null), fc.constantFrom(...ERROR_CLASSES)),
  latencyMs: anyNumber,
  content: fc.option(content, { nil: null }),
  json: fc.oneof(fc.constant(null), fc.jsonValue(), fc.constant({ usage: { total_tokens: 5 } })),
  contentHash: fc.option(fc.constantFrom("a", "b"), { nil: null }),
  nonce: fc.constantFrom("", "lw-abc", "LW-ABC"),
});

const baseline: fc.Arbitrary<Baseline> = fc.oneof(
  fc.record({
    lengthMedian: fc.option(anyNumber, { nil: null }),
    latencyP50: fc.option(anyNumber, { nil: null }),
    latencyP90: fc.option(anyNumber, { nil: null }),
    samples: anyNumber,
    lengthSamples: maybe(anyNumber),
    latencySamples: maybe(anyNumber),
    recentHashes: fc.array(fc.constantFrom("a", "b"), { maxLength: 5 }),
  }),
  fc
    .array(
      fc.record({
        contentLength: fc.nat(2000),
        latencyMs: fc.nat(20_000),
        passed: fc.boolean(),
        contentHash: fc.option(fc.constantFrom("a", "b"), { nil: null }),
        hardFailure: fc.boolean(),
      }),
      { maxLength: 30 },
    )
    .map(computeBaseline),
);

/**
 * Answered probes close to a good one, so that passing probes, failed checks at a passing
 * weighted score and broken checks all come up (the inputs above rarely pass).
 */
const LONG_155 = "The fast train from Paris to Lyon takes about 155 minutes on most days.";
const nearGood: fc.Arbitrary<[SampleExpect, ProbeObservation, Baseline]> = fc.tuple(
  fc.record(
    {
      minLength: fc.integer({ min: 0, max: 150 }),
      maxLength: fc.integer({ min: 1, max: 200 }),
      requiredFields: fc.subarray(["usage.total_tokens", "content.city", "content.country"]),
      contains: fc.subarray(["train", "155", "lyon", "minutes", "plane"]),
      answer: fc.constantFrom("155", "145"),
      nonce: fc.boolean(),
      varies: fc.boolean(),
      maxLatencyMs: fc.integer({ min: 500, max: 3000 }),
    },
    { requiredKeys: [] },
  ),
  fc.record({
    status: fc.constant(200),
    errorClass: fc.constant(null),
    latencyMs: fc.integer({ min: 0, max: 6000 }),
    content: fc.constantFrom(LONG_155, "155", "145", "lw-abc: about 155 minutes by train", '{"city":"Lyon","country":"France"}'),
    json: fc.constantFrom(null, { usage: { total_tokens: 5 } }),
    contentHash: fc.option(fc.constantFrom("a", "b"), { nil: null }),
    nonce: fc.constantFrom("", "lw-abc"),
  }),
  baseline,
);
const probeInput = fc.oneof({ arbitrary: fc.tuple(sampleExpect, observation, baseline), weight: 1 }, { arbitrary: nearGood, weight: 3 });
/** The line's anchored usual length and its peers', as the prober passes them (often none). */
const anchors = fc.record({
  anchoredLength: fc.option(fc.oneof(fc.integer({ min: 0, max: 400 }), anyNumber), { nil: null }),
  peerLength: fc.option(fc.oneof(fc.integer({ min: 0, max: 400 }), anyNumber), { nil: null }),
});
const score = ([e, o, b]: [SampleExpect, ProbeObservation, Baseline], a: Partial<ScoreProbeInput> = {}): ScoredProbe =>
  scoreProbe({ expect: e, observation: o, baseline: b, ...a });
/** The rule of docs/scoring.md, from the outside. */
const passes = (r: ScoredProbe) => !r.hardFailure && failedCheckNames(r.checks).length === 0 && r.score >= PASS_SCORE;

const unit = fc.double({ min: 0, max: 1, noNaN: true });
const components: fc.Arbitrary<ScoreComponents> = fc.record({
  length: unit,
  fields: unit,
  freshness: unit,
  status: unit,
  latency: unit,
});

describe("scoring properties", () => {
  it("every component is in [0, 1] and the score in [0, 100], for any input", () => {
    fc.assert(
      fc.property(sampleExpect, observation, baseline, (e, o, b) => {
        const r = scoreProbe({ expect: e, observation: o, baseline: b });
        for (const name of COMPONENT_NAMES) {
          expect(r.components[name]).toBeGreaterThanOrEqual(0);
          expect(r.components[name]).toBeLessThanOrEqual(1);
        }
        expect(r.score).toBeGreaterThanOrEqual(0);
        expect(r.score).toBeLessThanOrEqual(100);
        expect(Math.round(r.score * 10) / 10).toBe(r.score);
        expect(r.passed).toBe(passes(r));
        expect(r.contentLength).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 500 },
    );
  });

  it("passed ⇔ no hard failure, no failed check and score ≥ 60, with anchored lengths too", () => {
    let passed = 0;
    let failedOnChecksOnly = 0;
    fc.assert(
      fc.property(probeInput, anchors, (input, a) => {
        const r = score(input, a);
        expect(r.passed).toBe(passes(r));
        if (r.passed) {
          passed += 1;
          expect(r.reasons.some((x) => x.startsWith("failed check"))).toBe(false);
        }
        if (!r.hardFailure && failedCheckNames(r.checks).length > 0 && scoreFromComponents(r.components) >= PASS_SCORE)
          failedOnChecksOnly += 1;
      }),
      { numRuns: 500 },
    );
    // The generators do reach passing probes, and failed checks at a passing weighted score.
    expect(passed).toBeGreaterThan(0);
    expect(failedOnChecksOnly).toBeGreaterThan(0);
  });

  it("a failed check fails the probe, caps its score at 40, and the first reason names exactly those checks", () => {
    let capped = 0;
    fc.assert(
      fc.property(probeInput, anchors, (input, a) => {
        const r = score(input, a);
        if (r.hardFailure) return;
        const failed = failedCheckNames(r.checks);
        const weighted = scoreFromComponents(r.components);
        if (failed.length === 0) {
          expect(r.reasons.some((x) => x.startsWith("failed check"))).toBe(false);
          expect(r.score).toBe(weighted);
          expect(r.passed).toBe(r.score >= PASS_SCORE);
          return;
        }
        if (weighted > FAILED_CHECK_SCORE) capped += 1;
        expect(r.score).toBe(Math.min(weighted, FAILED_CHECK_SCORE));
        expect(r.passed).toBe(false);
        expect(r.reasons[0]).toBe(`failed check: ${failed.join(", ")}`);
        expect(r.reasons.filter((x) => x.startsWith("failed check"))).toHaveLength(1);
      }),
      { numRuns: 500 },
    );
    expect(capped).toBeGreaterThan(0); // the case the cap exists for does come up
  });

  it("checks are well formed: known names, at most one each, a detail when not passed, none for a hard failure", () => {
    fc.assert(
      fc.property(probeInput, anchors, (input, a) => {
        const r = score(input, a);
        if (r.hardFailure) expect(r.checks).toEqual([]);
        const names = r.checks.map((c) => c.name);
        expect(new Set(names).size).toBe(names.length);
        for (const c of r.checks) {
          expect(CHECK_NAMES).toContain(c.name);
          expect(CHECK_VERDICTS).toContain(c.verdict);
          if (c.verdict === "pass") expect(c.detail).toBeUndefined();
          else expect(c.detail).toMatch(/\S/);
        }
        // Only a sample's bad regex and an `answer` against a JSON answer are broken.
        for (const c of r.checks.filter((x) => x.verdict === "broken")) expect(["matches", "answer"]).toContain(c.name);
      }),
      { numRuns: 500 },
    );
  });

  it("a broken check never fails a probe: without the expectation behind it, the probe scores the same", () => {
    let broken = 0;
    fc.assert(
      fc.property(probeInput, anchors, ([e, o, b], a) => {
        const r = score([e, o, b], a);
        const brokenNames = r.checks.filter((c) => c.verdict === "broken").map((c) => c.name);
        if (brokenNames.length === 0) return;
        broken += 1;
        const without: SampleExpect = { ...e };
        if (brokenNames.includes("matches")) delete without.matches;
        if (brokenNames.includes("answer")) delete without.answer;
        const clean = score([without, o, b], a);
        expect(r.components).toEqual(clean.components);
        expect(r.score).toBe(clean.score);
        expect(r.passed).toBe(clean.passed);
        expect(r.checks.filter((c) => c.verdict !== "broken")).toEqual(clean.checks);
      }),
      { numRuns: 500 },
    );
    expect(broken).toBeGreaterThan(0);
  });

  it("latency alone never fails a probe: any latency below the timeout, everything else right", () => {
    const NONCE = "lw-abc";
    const CONTENT = `${NONCE}: 155 minutes by Train`;
    const n = CONTENT.length;
    const good = fc.record(
      {
        minLength: fc.integer({ min: 0, max: n }),
        maxLength: fc.integer({ min: n, max: 10 * n }),
        requiredFields: fc.subarray(["usage.total_tokens"]),
        contains: fc.subarray(["train", "155", "BY TRAIN", "minutes"]),
        matches: fc.constantFrom("\\d+", "/^LW-/i", "minutes by"),
        answer: fc.constantFrom("155", "155 minutes"),
        nonce: fc.boolean(),
        varies: fc.boolean(),
        maxLatencyMs: fc.oneof(fc.integer({ min: 1, max: 20_000 }), anyNumber),
      },
      { requiredKeys: [] },
    );
    // Any usual latency, warm or cold; the usual length is this answer's, so only latency can move.
    const usual = fc.record({
      lengthMedian: fc.constantFrom(n, null),
      latencyP50: fc.option(fc.integer({ min: 1, max: 30_000 }), { nil: null }),
      latencyP90: fc.option(fc.integer({ min: 1, max: 60_000 }), { nil: null }),
      samples: fc.integer({ min: 0, max: 20 }),
      recentHashes: fc.array(fc.constantFrom("h1", "h2"), { maxLength: 5 }),
    });
    const latencyMs = fc.oneof(fc.integer({ min: 0, max: 120_000 }), fc.double({ min: 0, max: 1e7, noNaN: true }));
    let slow = 0;
    fc.assert(
      fc.property(
        good,
        usual,
        latencyMs,
        fc.integer({ min: 1, max: 2 * n }),
        fc.integer({ min: 1, max: Math.floor(n / (2 * PEER_LENGTH_SHARE)) }),
        (e, b, ms, anchoredLength, peerLength) => {
          const o: ProbeObservation = {
            status: 200,
            errorClass: null,
            latencyMs: ms,
            content: CONTENT,
            json: { usage: { total_tokens: 12 } },
            contentHash: "h0",
            nonce: NONCE,
          };
          const r = scoreProbe({ expect: e, observation: o, baseline: b, anchoredLength, peerLength });
          expect(r.components).toMatchObject({ length: 1, fields: 1, freshness: 1, status: 1 });
          expect(failedCheckNames(r.checks)).toEqual([]);
          expect(r.passed).toBe(true);
          if (r.components.latency < 0.5) slow += 1;
        },
      ),
      { numRuns: 500 },
    );
    expect(slow).toBeGreaterThan(0); // latency does fall far (the old floor failed these)
  });

  it("a hard failure always scores 0", () => {
    const hard = observation.filter((o) => o.errorClass !== null || o.status === null || o.status < 200 || o.status >= 300);
    fc.assert(
      fc.property(sampleExpect, hard, baseline, (e, o, b) => {
        const r = scoreProbe({ expect: e, observation: o, baseline: b });
        expect(r.hardFailure).toBe(true);
        expect(r.score).toBe(0);
        expect(r.passed).toBe(false);
        for (const name of COMPONENT_NAMES) expect(r.components[name]).toBe(0);
      }),
    );
  });

  it("a reason explains every component below 1", () => {
    fc.assert(
      fc.property(sampleExpect, observation, baseline, (e, o, b) => {
        const r = scoreProbe({ expect: e, observation: o, baseline: b });
        if (COMPONENT_NAMES.some((name) => r.components[name] < 1)) expect(r.reasons.length).toBeGreaterThan(0);
      }),
    );
  });

  it("scoreFromComponents is monotone in each component", () => {
    fc.assert(
      fc.property(components, fc.constantFrom(...COMPONENT_NAMES), unit, unit, (c, name, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(scoreFromComponents({ ...c, [name]: lo })).toBeLessThanOrEqual(scoreFromComponents({ ...c, [name]: hi }));
      }),
      { numRuns: 1000 },
    );
  });

  it("scoreFromComponents is monotone under any non-negative weights", () => {
    const weights = fc.record({
      length: fc.nat(100),
      fields: fc.nat(100),
      freshness: fc.nat(100),
      status: fc.nat(100),
      latency: fc.nat(100),
    });
    fc.assert(
      fc.property(components, weights, fc.constantFrom(...COMPONENT_NAMES), unit, (c, w, name, delta) => {
        const up = { ...c, [name]: Math.min(1, c[name] + delta) };
        expect(scoreFromComponents(c, w)).toBeLessThanOrEqual(scoreFromComponents(up, w));
      }),
    );
  });

  it("a longer answer never scores a lower length against the same median, below it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2000 }), fc.nat(2000), fc.nat(2000), (median, x, y) => {
        const [short, long] = x <= y ? [x, y] : [y, x];
        const b: Baseline = { lengthMedian: median, latencyP50: null, latencyP90: null, samples: 20, recentHashes: [] };
        const at = (n: number) => scoreProbe({ expect: {}, observation: obs("a".repeat(n)), baseline: b }).components.length;
        if (long <= median) expect(at(short)).toBeLessThanOrEqual(at(long));
      }),
    );
  });

  it("the expected answer itself is always accepted", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (answer) => {
        expect(judgeAnswer(answer, answer)).toBe("exact");
      }),
    );
  });
});

describe("adapter properties", () => {
  it("parseResponse never throws, and a failure names parse or protocol", () => {
    const body = fc.oneof(
      fc.string(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc
        .array(
          fc.oneof(
            fc.string(),
            fc.jsonValue().map((v) => JSON.stringify(v)),
            fc.constant("[DONE]"),
          ),
        )
        .map((parts) => parts.map((p) => `data: ${p}\n\n`).join("")),
    );
    fc.assert(
      fc.property(fc.constantFrom(...PROTOCOLS), fc.integer({ min: 100, max: 599 }), body, (protocol, status, text) => {
        const parsed = getAdapter(protocol).parseResponse(status, text);
        if (parsed.ok) expect(typeof parsed.content).toBe("string");
        else expect(["parse", "protocol"]).toContain(parsed.errorClass);
        if (status < 200 || status >= 300) expect(parsed.ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

function obs(content: string): ProbeObservation {
  return { status: 200, errorClass: null, latencyMs: 100, content, json: null, contentHash: null, nonce: "n" };
}
