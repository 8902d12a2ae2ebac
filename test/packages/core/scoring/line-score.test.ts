import { averageComponents, LINE_SCORE_WINDOW_MS, lineScore } from "@linewatch/core";
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
