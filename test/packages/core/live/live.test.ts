import {
  binomialTailBound,
  DEFAULT_LIVE_VERDICT,
  emptyCounts,
  FAILING_FALSE_ALARM_BOUND,
  failingAnswersFor,
  type LiveWindow,
  liveVerdict,
  type OutcomeCounts,
  summarizeLive,
} from "@linewatch/core";
import { describe, expect, it } from "vitest";

const NOW = 1_800_000_000_000;
const win = (endAgoMs: number, counts: Partial<OutcomeCounts>, routerId = "r1", heldBack = 0): LiveWindow => ({
  routerId,
  heldBack,
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
    ["too few answers say nothing", [win(1_000, { ok: 1, empty: 9 })], false, /fewer than 20/],
    [
      "four failed answers are too few for the failing rule",
      [win(1_000, { empty: 4 }, "r1", 30)],
      false,
      /fewer than 20.*30 requests held back/,
    ],
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
    [
      "9 failures of 44 over a 4.5% baseline is chance at low volume (tail > 10⁻⁶), not a rise",
      [win(1_000, { ok: 35, http_5xx: 9 }), win(600_000, { ok: 1220, http_5xx: 57 })],
      false,
      /20.5% failures of 44/,
    ],
    [
      "the same 20% over 200 answers is a rise",
      [win(1_000, { ok: 160, http_5xx: 40 }), win(600_000, { ok: 1220, http_5xx: 57 })],
      true,
      /rose to 20%/,
    ],
    [
      "five failed answers and no ok: failing, naming what ejection held back",
      [win(1_000, { empty: 3 }, "r1", 25), win(6_000, { empty: 2 }, "r1", 12)],
      true,
      /all 5 answers failed \(5 empty\).*; 37 requests held back by ejection; baseline/,
    ],
    [
      "failing counts every kind of failure, and 4xx are the client's",
      [win(1_000, { http_5xx: 2, timeout: 2, cut: 1, http_4xx: 3 })],
      true,
      /all 5 answers failed \(1 cut, 2 http_5xx, 2 timeout\)/,
    ],
    ["one ok answer breaks the failing rule", [win(1_000, { ok: 1, empty: 12 })], false, /fewer than 20/],
    [
      "not for a line whose own baseline fails more than 5%",
      [win(1_000, { http_5xx: 8 }), win(600_000, { ok: 900, http_5xx: 100 })],
      false,
      /fewer than 20/,
    ],
    [
      "at volume, silent wins over failing (the more telling signal)",
      [win(1_000, { empty: 30 }, "r1", 200)],
      true,
      /30 empty of 30 answers \(100%\) were 2xx failures.*200 requests held back by ejection/,
    ],
    [
      "a line that always fails 30% and now fails all its answers is a rise, not failing",
      [win(1_000, { http_5xx: 40 }), win(600_000, { ok: 700, http_5xx: 300 })],
      true,
      /rose to 100%/,
    ],
  ];
  it.each(cases)("%s", (_name, windows, suspect, reason) => {
    const v = liveVerdict(summarizeLive(windows, NOW));
    expect(v.suspect, v.reason).toBe(suspect);
    expect(v.reason).toMatch(reason);
    expect(v.reason).toMatch(/router r1/);
  });
});

describe("the failing rule's false-alarm bound", () => {
  it("k is the fewest answers whose all failing is at most 10⁻⁶ likely for a line failing ≤ 5% (the default)", () => {
    expect(failingAnswersFor(0.05)).toBe(5);
    expect(0.05 ** 5).toBeLessThanOrEqual(FAILING_FALSE_ALARM_BOUND);
    expect(0.05 ** 4).toBeGreaterThan(FAILING_FALSE_ALARM_BOUND);
    expect(DEFAULT_LIVE_VERDICT.failingAnswers).toBe(failingAnswersFor(DEFAULT_LIVE_VERDICT.failingMaxBaseline));
    expect(failingAnswersFor(0.01)).toBe(3);
    expect(failingAnswersFor(0.2, 1e-3)).toBe(5);
  });

  it("sums what several routers held back, and counts it apart from the answers", () => {
    const s = summarizeLive([win(1_000, { empty: 2 }, "r1", 7), win(2_000, { empty: 1, ok: 1 }, "r2", 5)], NOW);
    expect(s.recent.heldBack).toBe(12);
    expect(s.recent.requests).toBe(4);
    expect(s.recent.failureRate).toBe(0.75);
  });

  it("several routers' failed answers add up to the rule's k", () => {
    const two = [win(1_000, { empty: 3 }, "r1", 10), win(2_000, { empty: 2 }, "r2", 10)];
    const v = liveVerdict(summarizeLive(two, NOW));
    expect(v.suspect && v.signal).toBe("failing");
    expect(v.reason).toMatch(/routers r1, r2; 20 requests held back/);
  });
});

describe("binomialTailBound", () => {
  const exactTail = (k: number, n: number, p: number) => {
    let pmf = (1 - p) ** n;
    let tail = k === 0 ? pmf : 0;
    for (let i = 1; i <= n; i++) {
      pmf *= ((n - i + 1) / i) * (p / (1 - p));
      if (i >= k) tail += pmf;
    }
    return tail;
  };
  it.each([
    [9, 44, 0.045],
    [12, 40, 0.05],
    [5, 20, 0.05],
    [30, 100, 0.01],
    [20, 20, 0.05],
  ])("P(X ≥ %i | n %i, p %d) is at most the bound", (k, n, p) => {
    const exact = exactTail(k, n, p);
    const bound = binomialTailBound(k, n, p);
    expect(bound).toBeGreaterThanOrEqual(exact);
    expect(bound).toBeLessThan(1);
  });
  it("is 1 at or below the mean, 0 when the baseline never fails", () => {
    expect(binomialTailBound(2, 40, 0.05)).toBe(1);
    expect(binomialTailBound(3, 40, 0)).toBe(0);
  });
});
