// The dashboard's time charts open on the data that exists, up to the chosen window (issue 26):
// the pure part of it, as a table. The browser tests (dashboard/dashboard.test.ts) check the charts.
import { describe, expect, it } from "vitest";
import { firstFilledBucket, fitStart, MIN_SPAN_MS } from "../../../apps/control-plane/src/dashboard/client/fit-window";

const H = 3_600_000;
const M = 60_000;

describe("fitStart", () => {
  const start = 0;
  const end = 6 * H;
  it.each([
    ["no data: the whole window", null, 0, start],
    ["data from the window's start: the whole window", 0, 0, start],
    ["data older than the window (cannot be, but): the whole window", -H, 0, start],
    ["two minutes of data: from the first of it", end - 2 * M, 0, end - 2 * M],
    ["with a margin before the first point", end - 20 * M, M, end - 21 * M],
    ["a margin never reaches before the window", 30 * 1000, M, start],
    ["a first point seconds old still spans MIN_SPAN_MS", end - 5000, 0, end - MIN_SPAN_MS],
    ["five hours of data: from the first of it", H, 0, H],
  ] as const)("%s", (_what, firstAt, margin, expected) => {
    expect(fitStart(start, end, firstAt, margin)).toBe(expected);
  });

  it("never spans more than the window, whatever the data", () => {
    for (const firstAt of [null, -1, 0, 1, M, end - 1, end, end + M])
      expect(fitStart(start, end, firstAt, 10 * M)).toBeGreaterThanOrEqual(start);
    // A window shorter than MIN_SPAN_MS is shown whole.
    expect(fitStart(0, M, 30_000)).toBe(0);
  });
});

describe("firstFilledBucket", () => {
  it("is the earliest bucket any series has a value in", () => {
    expect(firstFilledBucket([])).toBeNull();
    expect(firstFilledBucket([[null, null]])).toBeNull();
    expect(
      firstFilledBucket([
        [null, null, null, 90],
        [null, 70, null, 80],
      ]),
    ).toBe(1);
    expect(firstFilledBucket([[0, null]])).toBe(0);
  });
});
