import { averageComponents, LINE_SCORE_WINDOW_MS, lineScore, summedLineScore } from "@linewatch/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const NOW = 1_764_450_000_000;
const MIN = 60_000;

describe("lineScore", () => {
  it("is the mean of the last 10 minutes of probe scores", () => {
    const results = [
      { score: 90, startedAt: NOW - 1 * MIN },
      { score: 70, startedAt: NOW - 9 * MIN },
      { score: 0, startedAt: NOW - 11 * MIN },
      { score: 0, startedAt: NOW + 1 * MIN },
    ];
    expect(lineScore(results, NOW)).toBe(80);
    expect(LINE_SCORE_WINDOW_MS).toBe(10 * MIN);
  });

  it("counts the window's edge, honours a custom window and sample weights", () => {
    expect(lineScore([{ score: 50, startedAt: NOW - 10 * MIN }], NOW)).toBe(50);
    expect(lineScore([{ score: 50, startedAt: NOW - 2 * MIN }], NOW, MIN)).toBeNull();
    expect(
      lineScore(
        [
          { score: 100, startedAt: NOW, weight: 3 },
          { score: 0, startedAt: NOW },
        ],
        NOW,
      ),
    ).toBe(75);
  });

  it("is null with no probes, and rounds to 0.1", () => {
    expect(lineScore([], NOW)).toBeNull();
    expect(
      lineScore(
        [
          { score: 100, startedAt: NOW },
          { score: 33.3, startedAt: NOW },
          { score: 0, startedAt: NOW },
        ],
        NOW,
      ),
    ).toBe(44.4);
  });
});

describe("summedLineScore (the dashboard's trend, per bucket, from per-sample sums)", () => {
  it("weighs each sample's probes by its weight; 0, negative or NaN weigh nothing; null when nothing weighs", () => {
    expect(
      summedLineScore([
        { scoreSum: 300, probes: 3, weight: 3 },
        { scoreSum: 0, probes: 1, weight: 1 },
      ]),
    ).toBe(90);
    expect(summedLineScore([{ scoreSum: 90, probes: 1 }])).toBe(90);
    expect(
      summedLineScore([
        { scoreSum: 90, probes: 1, weight: 0 },
        { scoreSum: 10, probes: 1, weight: Number.NaN },
      ]),
    ).toBeNull();
    expect(
      summedLineScore([
        { scoreSum: 40, probes: 1, weight: -2 },
        { scoreSum: 80, probes: 1, weight: 1 },
      ]),
    ).toBe(80);
    expect(summedLineScore([])).toBeNull();
  });

  it("is lineScore over the same probes", () => {
    const probe = fc.record({
      sample: fc.integer({ min: 0, max: 3 }),
      score: fc.double({ min: 0, max: 100, noNaN: true }),
    });
    const weights = fc.array(fc.oneof(fc.constant(0), fc.double({ min: 0.01, max: 10, noNaN: true })), { minLength: 4, maxLength: 4 });
    fc.assert(
      fc.property(fc.array(probe, { maxLength: 40 }), weights, (probes, w) => {
        const sums = new Map<number, { scoreSum: number; probes: number; weight: number }>();
        for (const p of probes) {
          const s = sums.get(p.sample) ?? { scoreSum: 0, probes: 0, weight: w[p.sample] ?? 1 };
          s.scoreSum += p.score;
          s.probes += 1;
          sums.set(p.sample, s);
        }
        const one = lineScore(
          probes.map((p) => ({ score: p.score, startedAt: NOW, weight: w[p.sample] ?? 1 })),
          NOW,
        );
        const summed = summedLineScore(sums.values());
        if (one === null || summed === null) expect(summed).toBe(one);
        else expect(Math.abs(summed - one)).toBeLessThanOrEqual(0.1 + 1e-9);
      }),
    );
  });
});

describe("averageComponents", () => {
  it("averages each component", () => {
    expect(
      averageComponents([
        { components: { length: 1, fields: 0.5, freshness: 1, status: 1, latency: 0.2 } },
        { components: { length: 0, fields: 1, freshness: 0, status: 1, latency: 0.1 } },
      ]),
    ).toEqual({ length: 0.5, fields: 0.75, freshness: 0.5, status: 1, latency: 0.15 });
    expect(averageComponents([])).toBeNull();
  });
});
