// Usage honesty, by table: (the line's anchors, its peers', what it claims) → the usage check and
// the billing evidence.
import { describe, expect, it } from "vitest";
import {
  judgeUsage,
  parseUsageTrack,
  stepUsage,
  type TokenAnchor,
  type UsageInput,
  type UsageTrack,
} from "../../../../packages/core/src/usage/index";

const anchorOf = (anchor: number, n = 21, recent: number[] = [anchor]): TokenAnchor => ({ anchor, n, recent, low: anchor });
/** A track anchored at `prompt` tokens (its fewest too) and `ratio` tokens per character over answers of 400 characters. */
const track = (prompt: number | null, ratio: number | null = 0.25): UsageTrack => ({
  prompt: prompt === null ? {} : { v: anchorOf(prompt) },
  ratio: ratio === null ? { anchor: null, n: 0, recent: [] } : { ...anchorOf(ratio), chars: 400 },
});
const input = (
  claimed: { input: number | null; output: number | null },
  t: UsageTrack | null,
  peers: UsageTrack[] = [],
  tier: "paid" | "free" = "free",
): UsageInput => ({
  claimed,
  answerChars: 400,
  variant: "v",
  tier,
  track: t,
  peers: peers.map((p) => ({ tier: "paid", track: p })),
});

describe("the usage check, by table", () => {
  it.each<[string, UsageInput, "pass" | "fail" | null]>([
    ["honest: the anchor exactly", input({ input: 40, output: 100 }, track(40)), "pass"],
    ["honest: 2 tokens over the anchor", input({ input: 42, output: 102 }, track(40)), "pass"],
    ["honest: 2 under", input({ input: 38, output: 98 }, track(40)), "pass"],
    ["×1.2 prompt tokens, a 40-token prompt", input({ input: 48, output: 100 }, track(40)), "fail"],
    ["×1.2 prompt tokens, a 25-token prompt", input({ input: 30, output: 100 }, track(25)), "fail"],
    ["×1.2 completion tokens (400 characters at 0.25)", input({ input: 40, output: 120 }, track(40)), "fail"],
    ["reporting fewer is never a failure", input({ input: 20, output: 10 }, track(40)), "pass"],
    ["nothing to hold it to yet (no anchor, no peers): no check", input({ input: 400, output: 1000 }, null), null],
    ["nothing claimed: no check", input({ input: null, output: null }, track(40)), null],
    [
      "a free line 2 over its paid peers, with no anchor of its own",
      input({ input: 42, output: 100 }, track(null, null), [track(40)]),
      "pass",
    ],
    [
      "a free line that always inflated: ×1.2 over its paid peers",
      input({ input: 48, output: 100 }, track(null, null), [track(40)]),
      "fail",
    ],
    ["a free line 4 over its paid peers' fewest", input({ input: 44, output: 100 }, track(null, null), [track(40)]), "pass"],
    ["a free line 5 over its paid peers' fewest", input({ input: 45, output: 100 }, track(null, null), [track(40)]), "fail"],
    ["a paid line needs two paid peers", input({ input: 48, output: 100 }, track(null, null), [track(40)], "paid"), null],
    ["a paid line with two paid peers", input({ input: 48, output: 100 }, track(null, null), [track(40), track(40)], "paid"), "fail"],
  ])("%s", (_name, x, want) => {
    expect(judgeUsage(x).check?.verdict ?? null).toBe(want);
  });

  it("the billing evidence: tokens claimed against the tokens expected", () => {
    const j = judgeUsage(input({ input: 48, output: 120 }, track(40), [track(39)]));
    expect(j.billing).toEqual({ claimedInput: 48, expectedInput: 39, claimedOutput: 120, expectedOutput: 100 });
    expect(j.check?.detail).toBe(
      "inflated usage: prompt tokens 48 for the same prompt, this line's fewest 40; prompt tokens 48 for the same prompt, its paid peers' fewest 39; completion tokens 120 for 400 characters of answer, about 100 at this line's usual tokens per character",
    );
    expect(j.step).toEqual({ variant: "v", input: 48, output: 120, chars: 400 });
  });

  it("bad counts are not counts: negative, NaN and infinite claims are ignored", () => {
    const j = judgeUsage(input({ input: -5, output: Number.NaN }, track(40)));
    expect(j.check).toBeNull();
    expect(j.step).toEqual({ variant: "v", input: null, output: null, chars: 400 });
  });
});

describe("usage anchors", () => {
  it("a plain mean of the first 20 counts, then 1/2000 of the gap per count; only while learning", () => {
    let t: UsageTrack | undefined;
    for (let i = 0; i < 20; i++) t = stepUsage(t, { variant: "v", input: i % 2 ? 41 : 39, output: 100, chars: 400 }, true);
    expect(t?.prompt.v?.anchor).toBeCloseTo(40, 9);
    t = stepUsage(t, { variant: "v", input: 60, output: 100, chars: 400 }, true);
    expect(t?.prompt.v?.anchor).toBeCloseTo(40 + 20 / 2000, 9);
    const before = t?.prompt.v?.anchor;
    t = stepUsage(t, { variant: "v", input: 90, output: 100, chars: 400 }, false);
    expect(t?.prompt.v?.anchor).toBe(before);
    expect(t?.prompt.v?.recent).toEqual([41, 39, 41, 60, 90]);
    expect(t?.prompt.v?.low).toBe(39);
  });

  it("tokens per character: the mean tokens over the mean characters, not a mean of ratios a one-character answer dominates", () => {
    let t: UsageTrack | undefined;
    for (const [chars, output] of [
      [1, 3],
      [399, 100],
    ] as const)
      t = stepUsage(t, { variant: "v", input: null, output, chars }, true);
    expect(t?.ratio.anchor).toBeCloseTo(103 / 400, 6);
    expect(t?.ratio.chars).toBe(200);
  });

  it("stored before `low` and `chars` existed: the prompt anchor holds to its mean, the ratio starts over", () => {
    const t = parseUsageTrack({ prompt: { v: { anchor: 40, n: 21, recent: [40] } }, ratio: { anchor: 0.25, n: 21, recent: [0.25] } });
    expect(t?.prompt.v).toEqual({ anchor: 40, n: 21, recent: [40] });
    expect(judgeUsage(input({ input: 44, output: null }, t)).check?.verdict).toBe("pass");
    expect(judgeUsage(input({ input: 45, output: null }, t)).check?.verdict).toBe("fail");
    expect(t?.ratio).toEqual({ anchor: null, n: 0, recent: [0.25] });
  });
});

/** The track a line's counts teach while it is healthy: `counts` prompt tokens, answers (chars, tokens). */
function learned(counts: readonly number[], answers: ReadonlyArray<readonly [number, number]> = []): UsageTrack {
  let t: UsageTrack | undefined;
  for (let i = 0; i < 21; i++) {
    const [chars, output] = answers.length ? (answers[i % answers.length] as readonly [number, number]) : [0, null];
    t = stepUsage(t, { variant: "v", input: counts[i % counts.length] ?? null, output, chars }, true);
  }
  return t as UsageTrack;
}
const judge = (claimed: { input: number | null; output: number | null }, own: UsageTrack | null, peers: UsageTrack[], chars = 0) =>
  judgeUsage({ claimed, answerChars: chars, variant: "v", tier: "free", track: own, peers: peers.map((p) => ({ tier: "paid", track: p })) })
    .check?.verdict ?? null;

// The prompt sizes of the shipped samples as the lab counts them: the fingerprint bank's phrasings
// 15–38 tokens, the golden samples 28–67 (bench/README.md, what a relay can fake); every size between.
const SIZES = Array.from({ length: 80 - 15 + 1 }, (_, i) => 15 + i);
const OFFSETS = [-2, -1, 0, 1, 2];

describe("honest counts never fail, by construction (docs/scoring.md#usage)", () => {
  it("prompt tokens: anchored anywhere in T ± 2, a claim anywhere in T ± 2, against the line and its peers", () => {
    let judged = 0;
    for (const T of [2, 3, 5, 10, ...SIZES, 120, 400, 2000])
      for (const a of OFFSETS)
        for (const b of OFFSETS) {
          // The line's history: constant at a, or swinging between a and b; its two paid peers' at the extremes.
          const own = [learned([T + a]), learned([T + a, T + b])];
          const peers = [learned([T - 2]), learned([T + 2])];
          for (const t of own)
            for (const claim of OFFSETS) {
              expect(judge({ input: T + claim, output: null }, t, peers), `T ${T}, anchored ${a}/${b}, claim ${claim}`).toBe("pass");
              judged++;
            }
        }
    expect(judged).toBeGreaterThan(10_000);
    // …and the same claims 5 over the fewest fail: the band is no wider than the noise needs.
    expect(judge({ input: 45, output: null }, learned([40, 42]), [])).toBe("fail");
  });

  it("completion tokens: true counts within a token of ρ × chars, ±2 reported, answers of any length", () => {
    // Short answers of few tokens (the fingerprint bank's) and long ones, anchored in any mix; the
    // worst anchor is every anchored count 3 under and the claim 3 over (rounding and noise).
    const lengths = [1, 2, 3, 4, 7, 11, 14, 40, 150, 600, 900];
    for (const rho of [0.2, 0.25, 0.3])
      for (const anchoredOn of [[1, 2, 3], [7, 11, 14], [600, 900], lengths])
        for (const low of [true, false]) {
          const answers = anchoredOn.map((c) => [c, Math.max(0, Math.round(rho * c) + (low ? -2 : 2))] as const);
          const own = learned([], answers);
          const peers = [
            learned(
              [],
              anchoredOn.map((c) => [c, Math.max(0, Math.round(rho * c) - 2)] as const),
            ),
          ];
          for (const c of lengths)
            for (const noise of OFFSETS) {
              const claim = Math.max(0, Math.ceil(rho * c) + noise);
              expect(judge({ input: null, output: claim }, own, peers, c), `ρ ${rho}, ${c} chars, ${claim} tokens`).toBe("pass");
            }
        }
  });
});

describe("usage ×1.2 at every prompt size of the shipped samples", () => {
  const inflated = (T: number) => Math.round(T * 1.2);
  it.each(SIZES)("a %i-token prompt", (T) => {
    for (const o of OFFSETS) {
      // A line whose counts never moved (always T + o): ×1.2 is 0.2·T over its fewest, caught above 4 tokens.
      const still = learned([T + o]);
      expect(judge({ input: inflated(T) + o, output: null }, still, [])).toBe(T >= 23 ? "fail" : "pass");
      // A line whose counts wobbled ±2 (its fewest T − 2): caught at every shipped size when the claim's own noise is not under T.
      const wobbly = learned(OFFSETS.map((x) => T + x));
      if (o >= 0) expect(judge({ input: inflated(T) + o, output: null }, wobbly, [])).toBe("fail");
      // A free line that always inflated, against a paid peer whose counts wobble ±2: the same.
      if (o >= 0) expect(judge({ input: inflated(T) + o, output: null }, null, [wobbly])).toBe("fail");
    }
  });

  it("the sizes the boundary leaves: ×1.2 of a prompt of 22 tokens or fewer is within what an honest line may move", () => {
    // 22 → 26 is 4 over: exactly a line at −2 that now reports +2. Nothing tells them apart in one count.
    expect(inflated(22) - 22).toBe(4);
    expect(judge({ input: 24, output: null }, learned([20]), [])).toBe("pass");
    expect(inflated(23) - 23).toBe(5);
    expect(judge({ input: 28, output: null }, learned([23]), [])).toBe("fail");
  });
});
