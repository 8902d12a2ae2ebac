// The replay's ring window of recent results gives lineScore's answer, to the last bit, for any
// sequence of results and clock (the replay applies results in finish order, so their start times
// come out of order; lineScore is what the live path computes).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ScoreWindow } from "../../../../packages/core/src/replay/score-window";
import { LINE_SCORE_WINDOW_MS, lineScore, type ScoredResult } from "../../../../packages/core/src/scoring/line-score";

const T0 = 1_764_450_000_000;
const MIN = 60_000;

const stepArb = fc.record({
  dt: fc.integer({ min: 0, max: 3 * MIN }),
  /** How long before `now` the result started (it finished at `now`). */
  age: fc.integer({ min: 0, max: 12 * MIN }),
  score: fc.oneof(
    { weight: 8, arbitrary: fc.double({ min: 0, max: 100, noNaN: true }) },
    { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, 0, 100, 55.5, 92.1) },
  ),
  weight: fc.oneof(
    { weight: 6, arbitrary: fc.constant(1) },
    { weight: 3, arbitrary: fc.double({ min: 0, max: 5, noNaN: true }) },
    { weight: 1, arbitrary: fc.constantFrom(-1, 0, Number.NaN, Number.POSITIVE_INFINITY) },
  ),
});

describe("ScoreWindow", () => {
  it("scores as lineScore does over the same results, kept and trimmed as the replay keeps them", () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 300 }), (steps) => {
        const ring = new ScoreWindow(LINE_SCORE_WINDOW_MS);
        const list: ScoredResult[] = [];
        let now = T0;
        for (const s of steps) {
          now += s.dt;
          const startedAt = now - s.age;
          ring.push(startedAt, s.score, s.weight);
          list.push({ startedAt, score: s.score, weight: s.weight });
          ring.trim(now);
          while ((list[0]?.startedAt ?? now) < now - LINE_SCORE_WINDOW_MS) list.shift();
          expect(ring.length).toBe(list.length);
          expect(Object.is(ring.score(now), lineScore(list, now))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("keeps its results in order while it grows past its first capacity", () => {
    const ring = new ScoreWindow(LINE_SCORE_WINDOW_MS);
    const list: ScoredResult[] = [];
    for (let i = 0; i < 500; i++) {
      const at = T0 + i * 1_000;
      ring.push(at, i % 101, undefined);
      list.push({ startedAt: at, score: i % 101 });
      if (i % 3 === 0) {
        ring.trim(at);
        while ((list[0]?.startedAt ?? at) < at - LINE_SCORE_WINDOW_MS) list.shift();
      }
      expect(ring.score(at)).toBe(lineScore(list, at));
    }
    expect(ring.length).toBeGreaterThan(64);
  });
});
