// Properties that hold for any input, checked with fast-check.
import {
  type Baseline,
  COMPONENT_NAMES,
  computeBaseline,
  ERROR_CLASSES,
  getAdapter,
  judgeAnswer,
  PASS_SCORE,
  PROTOCOLS,
  type ProbeObservation,
  type SampleExpect,
  type ScoreComponents,
  scoreFromComponents,
  scoreProbe,
} from "@linewatch/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
// Not re-exported from @linewatch/core (yet): read from the module itself.
import { CHECK_FLOOR, failedChecks } from "../../../../packages/core/src/scoring/weights";

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
 * score and components near CHECK_FLOOR all come up (the inputs above rarely pass).
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
        expect(r.passed).toBe(!r.hardFailure && r.score >= PASS_SCORE && failedChecks(r.components).length === 0);
        expect(r.contentLength).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 500 },
    );
  });

  it("passed implies score ≥ 60, every component ≥ CHECK_FLOOR and no hard failure", () => {
    let passed = 0;
    fc.assert(
      fc.property(probeInput, ([e, o, b]) => {
        const r = scoreProbe({ expect: e, observation: o, baseline: b });
        if (!r.passed) return;
        passed += 1;
        expect(r.hardFailure).toBe(false);
        expect(r.score).toBeGreaterThanOrEqual(PASS_SCORE);
        for (const name of COMPONENT_NAMES) expect(r.components[name]).toBeGreaterThanOrEqual(CHECK_FLOOR);
        expect(r.reasons.some((x) => x.startsWith("failed check"))).toBe(false);
      }),
      { numRuns: 500 },
    );
    expect(passed).toBeGreaterThan(0); // the generators do reach passing probes
  });

  it("a component below CHECK_FLOOR fails the probe, and the first reason names exactly those checks", () => {
    let failedAtPassingScore = 0;
    fc.assert(
      fc.property(probeInput, ([e, o, b]) => {
        const r = scoreProbe({ expect: e, observation: o, baseline: b });
        if (r.hardFailure) return;
        const below = COMPONENT_NAMES.filter((name) => r.components[name] < CHECK_FLOOR);
        if (below.length === 0) {
          expect(r.reasons.some((x) => x.startsWith("failed check"))).toBe(false);
          expect(r.passed).toBe(r.score >= PASS_SCORE);
          return;
        }
        if (r.score >= PASS_SCORE) failedAtPassingScore += 1;
        expect(r.passed).toBe(false);
        expect(r.reasons[0]).toBe(`failed check: ${below.join(", ")} below 0.5`);
      }),
      { numRuns: 500 },
    );
    expect(failedAtPassingScore).toBeGreaterThan(0); // the case the floor exists for does come up
  });

  it("failedChecks lists exactly the components below CHECK_FLOOR, in COMPONENT_NAMES order", () => {
    const nearFloor = fc.oneof(unit, fc.constantFrom(0, 0.49, 0.499, CHECK_FLOOR, 0.501, 1));
    const c = fc.record({ length: nearFloor, fields: nearFloor, freshness: nearFloor, status: nearFloor, latency: nearFloor });
    fc.assert(
      fc.property(c, (components) => {
        const failed = failedChecks(components);
        expect(failed).toEqual(COMPONENT_NAMES.filter((name) => failed.includes(name)));
        for (const name of COMPONENT_NAMES) expect(failed.includes(name)).toBe(components[name] < CHECK_FLOOR);
      }),
      { numRuns: 1000 },
    );
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
