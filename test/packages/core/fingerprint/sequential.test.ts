// The sequential test's false-alarm bound (packages/core/src/fingerprint/sequential.ts): the
// threshold for a designed rate, the supermartingale condition each answer's LLR meets while the
// usual miss rate is an upper bound, and, by simulation over random honest models, crossings per
// statistic-answer under exp(−h) at thresholds low enough to see some.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type AnswerAnchor,
  anchorMissRate,
  answerLlr,
  FALSE_ALARMS_PER_KILO_LINE_DAY,
  type FingerprintTrack,
  falseAlarmsPerLineDay,
  fingerprintThreshold,
  judgeFingerprint,
  MISS_CAP,
  MISS_FLOOR,
  mulberry32,
  stepFingerprint,
  stepStatistic,
  variantKey,
} from "../../../../packages/core/src/index";

const PROMPT = "Pick a random number between 1 and 10. Answer with the number only.";
const V = variantKey(PROMPT);
const REQUEST = { messages: [{ role: "user", content: PROMPT }], max_tokens: 8, temperature: 0 };

describe("the threshold for a false-alarm rate", () => {
  it("10 samples at 45 s, 1 false verdict per 1000 line-days: h = ln(2 · 10 · 1920 · 1000)", () => {
    const h = fingerprintThreshold({ samples: 10, intervalMs: 45_000 });
    expect(FALSE_ALARMS_PER_KILO_LINE_DAY).toBe(1);
    expect(h).toBeCloseTo(Math.log(2 * 10 * 1920 * 1000), 9);
    expect(h).toBeCloseTo(17.46, 2);
    expect(falseAlarmsPerLineDay(h, 10, 45_000)).toBeCloseTo(0.001, 9);
  });

  it("more samples, faster probes or a stricter rate raise it; it is the inverse of the designed rate", () => {
    const base = fingerprintThreshold({ samples: 10, intervalMs: 45_000 });
    expect(fingerprintThreshold({ samples: 20, intervalMs: 45_000 })).toBeCloseTo(base + Math.log(2), 9);
    expect(fingerprintThreshold({ samples: 10, intervalMs: 22_500 })).toBeCloseTo(base + Math.log(2), 9);
    expect(fingerprintThreshold({ samples: 10, intervalMs: 45_000, falseAlarmsPerKiloLineDay: 0.1 })).toBeCloseTo(base + Math.log(10), 9);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1_000, max: 86_400_000 }), (n, interval) => {
        const h = fingerprintThreshold({ samples: n, intervalMs: interval });
        expect(falseAlarmsPerLineDay(h, n, interval)).toBeCloseTo(0.001, 9);
      }),
    );
  });
});

describe("each answer's log-likelihood ratio", () => {
  it("property: while the usual rate p0 is at least the true miss rate, E[exp(LLR)] ≤ 1 and E[LLR] < 0", () => {
    fc.assert(
      fc.property(fc.double({ min: MISS_FLOOR, max: MISS_CAP, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (p0, f) => {
        const pi = p0 * f; // the true miss rate, at most p0
        const miss = answerLlr(true, p0);
        const hit = answerLlr(false, p0);
        expect(miss).toBeGreaterThan(0);
        expect(hit).toBeLessThan(0);
        expect(pi * Math.exp(miss) + (1 - pi) * Math.exp(hit)).toBeLessThanOrEqual(1 + 1e-12);
        expect(pi * miss + (1 - pi) * hit).toBeLessThan(0);
      }),
    );
  });

  it("the usual rate is an upper bound: for an anchor of n honest answers, below the true rate ~10% of the time (a one-sided 90% bound; the binomial steps add a little)", () => {
    // Exact over the binomial: P(bound < π) for π in 1–15% and anchors of 20–2000 answers.
    // (A true rate of 20% or more is not a miss rate: such an answer is in the support.)
    for (const pi of [0.01, 0.05, 0.1, 0.15]) {
      for (const n of [20, 50, 200, 2000]) {
        let below = 0;
        let logC = 0;
        for (let m = 0; m <= n; m++) {
          if (m > 0) logC += Math.log((n - m + 1) / m);
          const p = Math.exp(logC + m * Math.log(pi) + (n - m) * Math.log(1 - pi));
          const a: AnswerAnchor = { shares: m === n ? { "3": 1 } : { "7": 1 - m / n, ...(m > 0 ? { "3": m / n } : {}) }, n };
          // Misses are the answers outside the support (share ≥ 20%): "3" counts only while rare.
          if (m / n < 0.2 && anchorMissRate(a) < pi) below += p;
        }
        expect(below, `π ${pi}, n ${n}`).toBeLessThan(0.13);
      }
    }
  });

  it("a statistic never goes below 0 nor above 1.5 × its threshold", () => {
    expect(stepStatistic(0.2, -1, 10)).toBe(0);
    expect(stepStatistic(14.9, 3, 10)).toBe(15);
    expect(stepStatistic(3, 2, 10)).toBe(5);
  });
});

/** An honest model's answer distribution: a mode, a second choice up to 10%, sometimes a third up to 1%. */
const honestModel = fc.record({
  second: fc.double({ min: 0, max: 0.1, noNaN: true }),
  third: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 0.01, noNaN: true })),
  seed: fc.integer({ min: 1, max: 2 ** 30 }),
});

/** Entries into ≥ h of the own statistic over `answers` honest answers, the anchor learning as in service. */
function crossings(m: { second: number; third: number; seed: number }, h: number, answers: number): { crossings: number; judged: number } {
  const rng = mulberry32(m.seed);
  let track: FingerprintTrack | undefined;
  let count = 0;
  let judged = 0;
  for (let i = 0; i < answers; i++) {
    const r = rng();
    const content = r < m.third ? "9" : r < m.third + m.second ? "3" : "7";
    const j = judgeFingerprint({
      expect: { fingerprint: { form: "number" } },
      request: REQUEST,
      variant: V,
      content,
      tier: "paid",
      track,
      peers: [],
      threshold: h,
    });
    if (!j.step) throw new Error("a usable sample");
    if (j.step.own !== null) judged++;
    const was = track?.own ?? 0;
    track = stepFingerprint(track, j.step, j.check.verdict !== "fail");
    if (was < h && track.own >= h) count++;
  }
  return { crossings: count, judged };
}

describe("the false-alarm bound, by simulation", () => {
  it("property: honest answers cross a threshold h at most exp(−h) times per statistic-answer (h = 4 and 5)", () => {
    let total = 0;
    let judgedTotal = 0;
    fc.assert(
      fc.property(honestModel, fc.constantFrom(4, 5), (m, h) => {
        const { crossings: c, judged } = crossings(m, h, 4000);
        total += c;
        judgedTotal += judged;
        // The Ville/Lorden bound: expected crossings ≤ judged · exp(−h); a run may exceed its mean
        // only by chance, so each run is held to a Poisson tail above it (p < 1e-4).
        const mean = judged * Math.exp(-h);
        expect(c).toBeLessThanOrEqual(Math.ceil(mean + 4 * Math.sqrt(mean) + 4));
      }),
      { numRuns: 40, seed: 25 },
    );
    // Pooled over the runs, well under the bound at h = 5 (the larger of the two).
    expect(total).toBeLessThan(judgedTotal * Math.exp(-4));
  });

  it("a line whose answer moved crosses within ⌈h / ln(0.35/0.05)⌉ answers at the floor rate", () => {
    const h = 17.46;
    let track: FingerprintTrack | undefined = {
      own: 0,
      peers: 0,
      threshold: h,
      variants: { [V]: { anchor: { shares: { "7": 1 }, n: 500 }, recent: [] } },
    };
    const needed = Math.ceil(h / Math.log(0.35 / 0.05));
    let at = -1;
    for (let i = 0; i < 20 && at < 0; i++) {
      const j = judgeFingerprint({
        expect: { fingerprint: { form: "number" } },
        request: REQUEST,
        variant: V,
        content: "4",
        tier: "paid",
        track,
        peers: [],
        threshold: h,
      });
      if (j.check.verdict === "fail") at = i + 1;
      if (j.step) track = stepFingerprint(track, j.step, false);
    }
    expect(needed).toBe(9);
    expect(at).toBe(needed);
  });
});
