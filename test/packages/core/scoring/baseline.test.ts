import { BASELINE_WINDOW, baselineWeight, computeBaseline, EMPTY_BASELINE, RECENT_HASHES } from "@linewatch/core";
import { describe, expect, it } from "vitest";

const entry = (
  contentLength: number,
  latencyMs: number,
  over: Partial<{ passed: boolean; hardFailure: boolean; contentHash: string | null }> = {},
) => ({
  contentLength,
  latencyMs,
  passed: true,
  hardFailure: false,
  contentHash: `h${contentLength}-${latencyMs}`,
  ...over,
});

describe("computeBaseline", () => {
  it("is empty with no history", () => {
    expect(computeBaseline([])).toEqual(EMPTY_BASELINE);
  });

  it("takes the length median of passing probes only", () => {
    const b = computeBaseline([
      entry(600, 1000),
      entry(180, 900, { passed: false }),
      entry(620, 1100),
      entry(590, 1000),
      entry(0, 10_000, { passed: false, hardFailure: true, contentHash: null }),
    ]);
    expect(b.lengthMedian).toBe(600);
    expect(b.lengthSamples).toBe(3);
    expect(b.samples).toBe(5);
  });

  it("takes latency quantiles of probes that got an answer, failed or not", () => {
    const latencies = [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000];
    const b = computeBaseline([
      ...latencies.map((ms, i) => entry(500, ms, { passed: i % 2 === 0 })),
      entry(0, 15_000, { hardFailure: true, passed: false, contentHash: null }),
    ]);
    expect(b.latencyP50).toBe(550);
    expect(b.latencyP90).toBeCloseTo(910);
    expect(b.latencySamples).toBe(10);
  });

  it(`looks at the newest ${BASELINE_WINDOW} probes only`, () => {
    const recent = Array.from({ length: BASELINE_WINDOW }, () => entry(100, 500));
    const old = Array.from({ length: 30 }, () => entry(1000, 5000));
    const b = computeBaseline([...recent, ...old]);
    expect(b.lengthMedian).toBe(100);
    expect(b.latencyP90).toBe(500);
    expect(b.samples).toBe(BASELINE_WINDOW);
  });

  it("keeps the newest hashes first, skipping probes without an answer", () => {
    const b = computeBaseline([
      entry(1, 1, { contentHash: "a" }),
      entry(1, 1, { contentHash: null, hardFailure: true, passed: false }),
      entry(1, 1, { contentHash: "b", passed: false }),
      ...Array.from({ length: 10 }, (_, i) => entry(1, 1, { contentHash: `x${i}` })),
    ]);
    expect(b.recentHashes.slice(0, 3)).toEqual(["a", "b", "x0"]);
    expect(b.recentHashes).toHaveLength(RECENT_HASHES);
  });

  it("blends in by sample count", () => {
    expect([0, 1, 2, 5, 20, undefined].map(baselineWeight)).toEqual([0, 0.2, 0.4, 1, 1, 0]);
  });
});
