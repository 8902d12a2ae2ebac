import { emptyCounts, type LiveWindow, liveVerdict, type OutcomeCounts, summarizeLive } from "@linewatch/core";
import { describe, expect, it } from "vitest";

const NOW = 1_800_000_000_000;
const win = (endAgoMs: number, counts: Partial<OutcomeCounts>, routerId = "r1"): LiveWindow => ({
  routerId,
  start: NOW - endAgoMs - 5_000,
  end: NOW - endAgoMs,
  counts: { ...emptyCounts(), ...counts },
  promptTokens: 10,
  completionTokens: 5,
});

describe("summarizeLive", () => {
  it("pools the recent windows (each weighs by its volume) and keeps the hour before as the baseline", () => {
    const s = summarizeLive(
      [
        win(10_000, { ok: 90, empty: 10 }, "r2"),
        win(60_000, { ok: 10 }),
        win(600_000, { ok: 95, http_5xx: 5 }),
        win(7_200_000, { connect: 100 }),
      ],
      NOW,
    );
    expect(s.recent.requests).toBe(110);
    expect(s.recent.counts.empty).toBe(10);
    expect(s.recent.silentRate).toBeCloseTo(10 / 110);
    expect(s.recent.successRate).toBeCloseTo(100 / 110);
    expect(s.recent.routers).toEqual(["r1", "r2"]);
    expect(s.recent.promptTokens).toBe(20);
    expect(s.baseline.requests).toBe(100); // the window 2 h ago is outside both
    expect(s.baseline.failureRate).toBeCloseTo(0.05);
  });

  it("does not count 4xx against the line", () => {
    const s = summarizeLive([win(1_000, { ok: 50, http_4xx: 50 })], NOW);
    expect(s.recent.failureRate).toBe(0);
    expect(s.recent.successRate).toBe(0.5);
  });
});

describe("liveVerdict", () => {
  const cases: [string, LiveWindow[], boolean, RegExp][] = [
    ["too few answers say nothing", [win(1_000, { empty: 10 })], false, /fewer than 20/],
    ["5% empty with enough answers is suspect", [win(1_000, { ok: 95, empty: 5 })], true, /5 empty of 100 answers \(5%\)/],
    ["masked errors count like empties", [win(1_000, { ok: 90, masked_error: 6, cut: 4 })], true, /6 masked_error, 4 cut of 100/],
    ["4% empty is not", [win(1_000, { ok: 96, empty: 4 })], false, /4% failures/],
    [
      "1% stray 5xx on a healthy line is not",
      [win(1_000, { ok: 99, http_5xx: 1 }), win(600_000, { ok: 990, http_5xx: 10 })],
      false,
      /1% failures/,
    ],
    [
      "a sharp rise over the line's own baseline is suspect",
      [win(1_000, { ok: 70, http_5xx: 20, timeout: 10 }), win(600_000, { ok: 990, http_5xx: 10 })],
      true,
      /rose to 30%.*20 http_5xx, 10 timeout.*baseline 1% of 1000/,
    ],
    [
      "a line that always fails 30% is not suspect at 35%",
      [win(1_000, { ok: 65, http_5xx: 35 }), win(600_000, { ok: 700, http_5xx: 300 })],
      false,
      /35% failures/,
    ],
    ["without a baseline, a 25% failure rate is a rise over the assumed 5%", [win(1_000, { ok: 75, connect: 25 })], true, /rose to 25%/],
  ];
  it.each(cases)("%s", (_name, windows, suspect, reason) => {
    const v = liveVerdict(summarizeLive(windows, NOW));
    expect(v.suspect).toBe(suspect);
    expect(v.reason).toMatch(reason);
    expect(v.reason).toMatch(/router r1/);
  });
});
