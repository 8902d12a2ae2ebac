// Usage honesty, by table: (the line's anchors, its peers', what it claims) → the usage check and
// the billing evidence.
import { describe, expect, it } from "vitest";
import { judgeUsage, stepUsage, type TokenAnchor, type UsageInput, type UsageTrack } from "../../../../packages/core/src/usage/index";

const anchorOf = (anchor: number, n = 21, recent: number[] = [anchor]): TokenAnchor => ({ anchor, n, recent });
const track = (prompt: number | null, ratio: number | null = 0.25, recent?: number[]): UsageTrack => ({
  prompt: prompt === null ? (recent ? { v: { anchor: null, n: 0, recent } } : {}) : { v: anchorOf(prompt, 21, recent ?? [prompt]) },
  ratio: ratio === null ? { anchor: null, n: 0, recent: [] } : anchorOf(ratio),
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
    // Against the peers the line's level is the median of its latest claims: one odd count is not a level.
    ["one odd count against the peers", input({ input: 48, output: 100 }, track(null, null, [40, 41, 39, 40]), [track(40)]), "pass"],
    ["a paid line needs two paid peers", input({ input: 48, output: 100 }, track(null, null), [track(40)], "paid"), null],
    ["a paid line with two paid peers", input({ input: 48, output: 100 }, track(null, null), [track(40), track(40)], "paid"), "fail"],
  ])("%s", (_name, x, want) => {
    expect(judgeUsage(x).check?.verdict ?? null).toBe(want);
  });

  it("the billing evidence: tokens claimed against the tokens expected", () => {
    const j = judgeUsage(input({ input: 48, output: 120 }, track(40), [track(39)]));
    expect(j.billing).toEqual({ claimedInput: 48, expectedInput: 39, claimedOutput: 120, expectedOutput: 100 });
    expect(j.check?.detail).toBe(
      "inflated usage: prompt tokens 48 for the same prompt, this line's anchor 40; completion tokens 120 for 400 characters of answer, about 100 at this line's usual tokens per character",
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
  });
});
