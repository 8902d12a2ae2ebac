// Schedule math lives in packages/core/src/schedule; its tests sit with health (the trend alert drives `fast`).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  budgetFloorMs,
  jitterOffsetMs,
  probeIntervalMs,
  probesPerDay,
  sampleOffsetsMs,
} from "../../../../packages/core/src/schedule/index";

describe("probeIntervalMs", () => {
  it.each([
    {
      name: "no quota: the configured interval",
      line: { probeIntervalSec: 45, dailyQuota: null, probeBudgetPct: 5 },
      n: 4,
      fast: false,
      ms: 45_000,
    },
    { name: "no quota, fast: half", line: { probeIntervalSec: 45, dailyQuota: null, probeBudgetPct: 5 }, n: 4, fast: true, ms: 22_500 },
    // 5% of 10 000/day = 500 probes; 4 per cycle → 125 cycles/day → 691.2 s.
    {
      name: "a small quota stretches it",
      line: { probeIntervalSec: 45, dailyQuota: 10_000, probeBudgetPct: 5 },
      n: 4,
      fast: false,
      ms: 691_200,
    },
    {
      name: "fast never goes below the budget floor",
      line: { probeIntervalSec: 45, dailyQuota: 10_000, probeBudgetPct: 5 },
      n: 4,
      fast: true,
      ms: 691_200,
    },
    // 5% of 400 000 = 20 000 probes/day; 4 per cycle → 17.28 s floor.
    {
      name: "fast halves within the budget",
      line: { probeIntervalSec: 45, dailyQuota: 400_000, probeBudgetPct: 5 },
      n: 4,
      fast: true,
      ms: 22_500,
    },
    {
      name: "fast stops at the floor",
      line: { probeIntervalSec: 30, dailyQuota: 400_000, probeBudgetPct: 5 },
      n: 4,
      fast: true,
      ms: 17_280,
    },
    {
      name: "a zero budget never probes",
      line: { probeIntervalSec: 45, dailyQuota: 1000, probeBudgetPct: 0 },
      n: 4,
      fast: false,
      ms: Number.POSITIVE_INFINITY,
    },
  ])("$name", ({ line, n, fast, ms }) => {
    expect(probeIntervalMs(line, n, { fast })).toBe(ms);
  });

  it("keeps probes within the budget, and fast never below the normal interval's half", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 86_400 }),
        fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 10_000_000 })),
        fc.double({ min: 0.01, max: 100, noNaN: true }),
        fc.integer({ min: 1, max: 20 }),
        (sec, quota, pct, n) => {
          const line = { probeIntervalSec: sec, dailyQuota: quota, probeBudgetPct: pct };
          const normal = probeIntervalMs(line, n);
          const fast = probeIntervalMs(line, n, { fast: true });
          expect(normal).toBeGreaterThanOrEqual(sec * 1000);
          expect(fast).toBeLessThanOrEqual(normal);
          expect(fast).toBeGreaterThanOrEqual(Math.min(normal, sec * 500));
          if (quota !== null) expect(probesPerDay(fast, n)).toBeLessThanOrEqual((quota * pct) / 100 + 1e-6);
          expect(fast).toBeGreaterThanOrEqual(budgetFloorMs(line, n));
        },
      ),
    );
  });
});

describe("jitter", () => {
  it("jitterOffsetMs lies in [0, interval) for any rng value", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 86_400_000 }), (r, interval) => {
        const o = jitterOffsetMs(() => r, interval);
        expect(Number.isInteger(o)).toBe(true);
        expect(o).toBeGreaterThanOrEqual(0);
        expect(o).toBeLessThan(interval);
      }),
    );
    expect(jitterOffsetMs(() => 0.5, 45_000)).toBe(22_500);
  });
  it("sampleOffsetsMs spaces a line's samples evenly across the interval", () => {
    expect(sampleOffsetsMs(10_000, 45_000, 4)).toEqual([10_000, 21_250, 32_500, 43_750]);
    expect(sampleOffsetsMs(40_000, 45_000, 4)).toEqual([40_000, 6_250, 17_500, 28_750]);
  });
});
