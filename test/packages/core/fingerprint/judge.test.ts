// The fingerprint check, by table: (the line's anchor, its peers', the answers that follow) →
// the verdict of each answer; then the sample's bad-input rules and who counts as a peer.
import { describe, expect, it } from "vitest";
import {
  type AnswerAnchor,
  anchorMissRate,
  checkFingerprintSample,
  type FingerprintInput,
  type FingerprintJudgment,
  type FingerprintTrack,
  judgeFingerprint,
  LONG_ANSWER,
  MISS_FLOOR,
  SHAPE_BONUS,
  stepFingerprint,
  variantKey,
} from "../../../../packages/core/src/fingerprint/index";
import type { Tier } from "../../../../packages/core/src/types";

const PROMPT = "Pick a random number between 1 and 10. Answer with the number only.";
const V = variantKey(PROMPT);
const REQUEST = { messages: [{ role: "user", content: PROMPT }], max_tokens: 8, temperature: 0 };
/** N = 10 samples at 45 s, 1 false verdict per 1000 line-days. */
const H = 17.46;

const anchor = (shares: Record<string, number>, n = 200): AnswerAnchor => ({ shares, n });
const track = (a: AnswerAnchor | null, own = 0, peers = 0): FingerprintTrack => ({
  own,
  peers,
  threshold: H,
  variants: a ? { [V]: { anchor: a, recent: [] } } : {},
});

interface Run {
  tier?: Tier;
  start: FingerprintTrack | null;
  peers?: Array<{ tier: Tier; anchor: AnswerAnchor }>;
  shapeChanged?: boolean;
}

/** Judges `answers` in turn, each stepping the track as the health machine does (learning as in service). */
function judge(run: Run, answers: string[]): FingerprintJudgment[] {
  let t: FingerprintTrack | undefined = run.start ?? undefined;
  const out: FingerprintJudgment[] = [];
  for (const content of answers) {
    const x: FingerprintInput = {
      expect: { fingerprint: { form: "number" } },
      request: REQUEST,
      variant: V,
      content,
      tier: run.tier ?? "free",
      track: t,
      peers: (run.peers ?? []).map((p) => ({ tier: p.tier, track: track(p.anchor) })),
      threshold: H,
      ...(run.shapeChanged ? { shapeChanged: true } : {}),
    };
    const j = judgeFingerprint(x);
    out.push(j);
    if (j.step) t = stepFingerprint(t, j.step, j.check.verdict !== "fail");
  }
  return out;
}
const verdicts = (js: FingerprintJudgment[]) => js.map((j) => j.check.verdict[0]).join("");
const times = (answer: string, n: number) => Array.from({ length: n }, () => answer);

const SEVENS = anchor({ "7": 1 });
const NOISY_SEVENS = anchor({ "7": 0.9, "3": 0.1 });

describe("fingerprint verdicts, by table", () => {
  it.each<[string, Run, string[], string]>([
    ["the anchored answer, again and again", { start: track(SEVENS) }, times("7", 30), "p".repeat(30)],
    ["one other answer: ordinary nondeterminism", { start: track(SEVENS) }, ["3", ...times("7", 5)], "pppppp"],
    [
      "the second choice at its usual 10%",
      { start: track(NOISY_SEVENS) },
      Array.from({ length: 50 }, (_, i) => (i % 10 === 9 ? "3" : "7")),
      "p".repeat(50),
    ],
    // At the floor (5%) a miss adds ln(0.35/0.05) = 1.95: 9 in a row reach 17.46.
    ["the answer moved: fails from the 9th miss", { start: track(SEVENS) }, times("3", 10), "ppppppppff"],
    // A usual rate of 10% (a Wilson bound of 13%) is weighed more gently: a miss adds ln(0.43/0.13) = 1.20, 15 of them.
    ["a line that often answers its second choice needs more", { start: track(NOISY_SEVENS) }, times("5", 16), `${"p".repeat(14)}ff`],
    ["a second choice that became the mode is still a miss", { start: track(NOISY_SEVENS) }, times("3", 16), `${"p".repeat(14)}ff`],
    // A hit takes ln(0.65/0.95) = 0.38 away: 18.46 → 18.08 → 17.70 → 17.32.
    ["after the verdict, the anchored answer again: back under the threshold", { start: track(SEVENS, H + 1) }, times("7", 4), "ffpp"],
    // 19 answers: the next is learned (the 20th), and the one after it too (the statistic stood at 0
    // before it): "7" 90%, "3" 10% of 21 answers, a miss rate of up to 21%, so a miss adds 0.96.
    // A run of misses teaches the anchor nothing more: 1.10 + 18 × 0.96 ≥ 17.46 at the 20th answer.
    ["a young anchor learns before it judges", { start: track(anchor({ "7": 1 }, 19)) }, times("3", 21), `${"p".repeat(19)}ff`],
  ])("%s", (_name, run, answers, want) => {
    expect(verdicts(judge(run, answers))).toBe(want);
  });

  it("a free line that never matched its paid peer fails without an anchor of its own", () => {
    const js = judge({ start: null, peers: [{ tier: "paid", anchor: SEVENS }] }, times("4", 10));
    expect(verdicts(js)).toBe("ppppppppff");
    expect(js[9]?.moved.map((m) => m.reference)).toEqual(["peers"]);
    expect(js[9]?.check.detail).toContain("does not match its paid peers' answers");
  });

  it("peers: a free line needs one paid peer, a paid line two; free peers never count", () => {
    const paid = { tier: "paid" as const, anchor: SEVENS };
    const free = { tier: "free" as const, anchor: SEVENS };
    expect(verdicts(judge({ tier: "paid", start: null, peers: [paid] }, times("4", 12)))).toBe("p".repeat(12));
    expect(verdicts(judge({ tier: "paid", start: null, peers: [paid, paid] }, times("4", 10)))).toBe("ppppppppff");
    expect(verdicts(judge({ tier: "free", start: null, peers: [free, free] }, times("4", 12)))).toBe("p".repeat(12));
  });

  it("two paid peers that disagree give a two-answer support: either of their answers is a hit", () => {
    const js = judge(
      {
        start: null,
        peers: [
          { tier: "paid", anchor: SEVENS },
          { tier: "paid", anchor: anchor({ "4": 1 }) },
        ],
      },
      times("4", 20),
    );
    expect(verdicts(js)).toBe("p".repeat(20));
    expect(js.every((j) => j.peers === 0)).toBe(true);
  });

  it("a recent shape change lowers the threshold by ln 20", () => {
    const plain = judge({ start: track(SEVENS) }, times("3", 10));
    const shaped = judge({ start: track(SEVENS), shapeChanged: true }, times("3", 10));
    expect(shaped[0]?.threshold).toBeCloseTo(H - SHAPE_BONUS, 9);
    expect(verdicts(plain).indexOf("f")).toBeGreaterThan(verdicts(shaped).indexOf("f"));
  });

  it("the verdict says which samples moved and how: the anchor's answers against the latest ones", () => {
    // 10 misses at the floor rate and one hit: 10 × 1.95 − 0.38 = 19.1 ≥ 17.46 at the last answer only.
    const js = judge({ start: track(anchor({ "7": 0.97, "5": 0.03 }, 212)) }, [...times("3", 7), "7", "3", "3", "3"]);
    expect(verdicts(js)).toBe("ppppppppppf");
    const last = js.at(-1) as FingerprintJudgment;
    expect(last.check.verdict).toBe("fail");
    const [move] = last.moved;
    expect(move?.reference).toBe("own");
    // The first miss came when the statistic stood at 0: the anchor learned it (one answer in 213).
    expect(move?.anchor).toEqual({
      answers: [
        { answer: "7", share: 0.965 },
        { answer: "5", share: 0.03 },
        { answer: "3", share: 0.005 },
      ],
      n: 213,
    });
    expect(move?.now).toEqual([
      { answer: "3", count: 7 },
      { answer: "7", count: 1 },
    ]);
    expect(last.check.detail).toMatch(
      /anchor "7" 97%, "5" 3%, "3" <1% \(213 answers\); now "3" 7, "7" 1 of the latest 8; evidence \d+(\.\d)? ≥ 17\.5/,
    );
    expect(last.step?.moved?.[0]?.now).toEqual(move?.now);
  });

  it("an anchor of answers that are not short is broken, with a reason, and never counts", () => {
    const js = judge({ start: track(anchor({ [LONG_ANSWER]: 0.8, "7": 0.2 })) }, times("3", 15));
    expect(js.every((j) => j.check.verdict === "broken")).toBe(true);
    expect(js[0]?.check.detail).toContain("not short");
    expect(js.every((j) => j.own === 0 && j.step?.own === null)).toBe(true);
  });

  it("the miss rate is an upper bound, at least the floor", () => {
    expect(anchorMissRate(SEVENS)).toBe(MISS_FLOOR);
    expect(anchorMissRate(anchor({ "7": 1 }, 20))).toBeGreaterThan(0.1);
    expect(anchorMissRate(NOISY_SEVENS)).toBeGreaterThan(0.1);
    expect(anchorMissRate(anchor({ "7": 0.9, "3": 0.1 }, 2000))).toBeLessThan(0.12);
  });
});

describe("a fingerprint sample's bad input", () => {
  const ok = { request: REQUEST, expect: { fingerprint: { form: "number" } } };
  it.each<[string, Parameters<typeof checkFingerprintSample>[0], RegExp | null]>([
    ["a usable sample", ok, null],
    ["no temperature", { ...ok, request: { ...REQUEST, temperature: undefined } }, /request\.temperature: must be 0/],
    ["temperature 0.7", { ...ok, request: { ...REQUEST, temperature: 0.7 } }, /request\.temperature: must be 0/],
    [
      "no token limit",
      { ...ok, request: { messages: REQUEST.messages, temperature: 0 } },
      /request\.max_tokens: a fingerprint sample limits its answer/,
    ],
    ["a long answer", { ...ok, request: { ...REQUEST, max_tokens: 400 } }, /request\.max_tokens: at most 32 .*not a long answer/],
    [
      "Responses' limit",
      { ...ok, request: { input: PROMPT, temperature: 0, max_output_tokens: 64 } },
      /request\.max_output_tokens: at most 32/,
    ],
    [
      "an unknown form",
      { ...ok, expect: { fingerprint: { form: "essay" } } },
      /expect\.fingerprint\.form: one of number, choice, word, letters/,
    ],
    ["a choice without options", { ...ok, expect: { fingerprint: { form: "choice" } } }, /expect\.fingerprint\.options: 2–26 options/],
    ["varies", { ...ok, expect: { ...ok.expect, varies: true } }, /expect\.varies/],
    ["nonce", { ...ok, expect: { ...ok.expect, nonce: true } }, /expect\.nonce/],
    ["variants not strings", { ...ok, variants: ["fine", 3] }, /variants: each a non-empty string/],
  ])("%s", (_name, sample, want) => {
    const problems = checkFingerprintSample(sample);
    if (want === null) expect(problems).toEqual([]);
    else expect(problems.join("; ")).toMatch(want);
  });

  it("a stored sample that breaks the rules is `broken` at every probe, with the reasons, and steps nothing", () => {
    const j = judgeFingerprint({
      expect: { fingerprint: { form: "number" } },
      request: { ...REQUEST, temperature: 1 },
      variant: V,
      content: "7",
      tier: "paid",
      track: track(SEVENS, 3),
      peers: [],
      threshold: H,
    });
    expect(j.check).toEqual({ name: "fingerprint", verdict: "broken", detail: expect.stringContaining("request.temperature: must be 0") });
    expect(j.step).toBeNull();
    expect(j.own).toBe(3);
  });
});
