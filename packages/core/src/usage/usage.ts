// Usage honesty (docs/scoring.md#usage): the prompt tokens a line reports for the same golden prompt
// (per sample and phrasing) on the same model are held to the fewest it reported while anchoring and to
// its paid peers' fewest; the completion tokens to the answer's length at the most tokens per character
// its (and its peers') anchored answers allow. Tolerances are built from the honest noise (±2 tokens),
// not from how often it shows, so an honest line never fails. Reporting more than that fails the `usage` check, and the claimed and
// expected tokens are the billing evidence. Reporting fewer is never a failure (nobody is overbilled).
import { failCheck, type ProbeCheck, passCheck } from "../scoring/checks";
import type { Tier } from "../types";

/** Tokens the upstream reported for one answer (the adapter's usage, split); null when it did not say. */
export interface UsageClaim {
  input: number | null;
  output: number | null;
}

/** An anchored token count (prompt tokens of one phrasing, or completion tokens per character). */
export interface TokenAnchor {
  /**
   * Prompt tokens: a plain mean of the first USAGE_WARMUP counts, then moving by 1/USAGE_ANCHOR_PROBES
   * per count. Completion tokens: tokens per character as the mean tokens over the mean characters
   * (both moving alike). null: none yet.
   */
  anchor: number | null;
  n: number;
  /** The latest values, newest last (USAGE_RECENT kept). */
  recent: number[];
  /** Prompt tokens: the fewest the line claimed while anchoring (what the check holds a claim to). */
  low?: number;
  /** Completion tokens: the mean characters of the answers anchored (anchor × chars is their mean tokens). */
  chars?: number;
}

export interface UsageTrack {
  /** Per phrasing (variantKey): the prompt tokens the line reports for it. */
  prompt: Record<string, TokenAnchor>;
  /** Completion tokens per character of answer. */
  ratio: TokenAnchor;
  /** The latest judged usage check failed, with this detail; absent while it passes (events name the change). */
  failing?: string;
}

export interface UsageStep {
  variant: string;
  input: number | null;
  output: number | null;
  /** Characters of the answer the completion tokens are for. */
  chars: number;
}

/** Billing evidence of one probe: tokens claimed and the tokens the references expect (null: no reference yet). */
export interface UsageBilling {
  claimedInput: number | null;
  expectedInput: number | null;
  claimedOutput: number | null;
  expectedOutput: number | null;
}

export interface UsagePeer {
  tier: Tier;
  /** Its health's `usage[sampleId]`. */
  track: UsageTrack | null | undefined;
}

export interface UsageInput {
  claimed: UsageClaim;
  /** Characters of the answer (code points). */
  answerChars: number;
  /** variantKey of the phrasing sent ("" for a sample without variants). */
  variant: string;
  tier: Tier;
  /** This line's `health.usage[sampleId]`. */
  track: UsageTrack | null | undefined;
  /** Route mates naming the same model. */
  peers: readonly UsagePeer[];
}

export interface UsageJudgment {
  /** The `usage` check; null while there is nothing to hold the claim to (no anchor, no peers) or nothing claimed. */
  check: ProbeCheck | null;
  step: UsageStep | null;
  billing: UsageBilling;
}

/** Values averaged plainly before an anchor moves slowly; usable from USAGE_USABLE on. */
export const USAGE_WARMUP = 20;
export const USAGE_USABLE = 8;
export const USAGE_ANCHOR_PROBES = 2000;
export const USAGE_RECENT = 5;
/**
 * Honest counts (docs/scoring.md#usage): every count a line reports for a text is within
 * HONEST_NOISE_TOKENS of the true count (a nonce tokenises differently, providers frame a prompt a token
 * apart), and the true count of an answer is within TOKENIZE_TOKENS of its characters × the model's
 * tokens per character. The rules below are built so that such a line never fails, whatever its counts
 * did before (a line at −2 that moves to +2 included); see each rule.
 */
export const HONEST_NOISE_TOKENS = 2;
export const TOKENIZE_TOKENS = 1;
/**
 * Prompt tokens fail above ref + max(PROMPT_BAND_TOKENS, PROMPT_SLACK_SHARE × ref), ref the fewest the
 * line claimed for the phrasing while anchoring (or the median of its paid peers' fewest). Honest: every
 * claim and every anchored claim lie in [T − 2, T + 2], so a claim is at most 4 over the fewest. ×1.2 of
 * a T-token prompt is 0.2·T over: caught from T = 23 against a line whose counts never moved, and from
 * fewer tokens as the line's own or its peers' fewest sit under the claim's offset.
 */
export const PROMPT_BAND_TOKENS = 2 * HONEST_NOISE_TOKENS;
export const PROMPT_SLACK_SHARE = 0.1;
/**
 * Completion tokens fail above chars × u × (1 + OUTPUT_SLACK_SHARE) + OUTPUT_SLACK_TOKENS, u = (mean
 * tokens + OUTPUT_SLACK_TOKENS) / mean characters of the anchored answers: honest anchored counts are at
 * least ρ·c − 3 each, so their mean is at least ρ × mean chars − 3 and u ≥ ρ; an honest claim is at most
 * ρ·c + 3. The share is for text whose density differs from the anchored answers' (real tokenizers).
 */
export const OUTPUT_SLACK_TOKENS = HONEST_NOISE_TOKENS + TOKENIZE_TOKENS;
export const OUTPUT_SLACK_SHARE = 0.12;

const EMPTY_ANCHOR: TokenAnchor = { anchor: null, n: 0, recent: [] };
export const emptyUsageTrack = (): UsageTrack => ({ prompt: {}, ratio: EMPTY_ANCHOR });

const usable = (a: TokenAnchor | undefined): a is TokenAnchor & { anchor: number } =>
  a !== undefined && a.anchor !== null && a.n >= USAGE_USABLE;
/** The fewest prompt tokens anchored (a track stored before `low` existed: its mean, never under T − 2 either). */
const lowOf = (a: TokenAnchor | undefined): number | null => (usable(a) ? (a.low ?? a.anchor) : null);
/** Tokens per character: the anchor's, and the most an honest line's can be (null: no usable ratio). */
function ratioOf(a: TokenAnchor | undefined): { usual: number; most: number } | null {
  if (!usable(a) || a.chars === undefined || a.chars <= 0) return null;
  return { usual: a.anchor, most: (a.anchor * a.chars + OUTPUT_SLACK_TOKENS) / a.chars };
}
const validCount = (x: number | null): x is number => x !== null && Number.isFinite(x) && x >= 0;

function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** The paid peers' values' median, when enough paid peers have one (a free line needs one, a paid line two). */
function peerReference(tier: Tier, values: Array<number | null>): number | null {
  const got = values.filter((v): v is number => v !== null);
  return got.length >= (tier === "paid" ? 2 : 1) ? median(got) : null;
}

const promptTolerance = (ref: number): number => Math.max(PROMPT_BAND_TOKENS, PROMPT_SLACK_SHARE * ref);

/** The usage check of one answer. Pure. */
export function judgeUsage(x: UsageInput): UsageJudgment {
  const input = validCount(x.claimed.input) ? x.claimed.input : null;
  const output = validCount(x.claimed.output) ? x.claimed.output : null;
  const chars = Number.isFinite(x.answerChars) && x.answerChars > 0 ? x.answerChars : 0;
  const step: UsageStep = { variant: x.variant, input, output, chars };
  const paid = x.peers.filter((p) => p.tier === "paid");
  const reasons: string[] = [];

  // Prompt tokens: each claim against the fewest the line claimed while anchoring, and its paid peers'.
  const ownAnchor = x.track?.prompt[x.variant];
  const ownLow = lowOf(ownAnchor);
  const peerLow = peerReference(
    x.tier,
    paid.map((p) => lowOf(p.track?.prompt[x.variant])),
  );
  if (input !== null && ownLow !== null && input > ownLow + promptTolerance(ownLow))
    reasons.push(`prompt tokens ${input} for the same prompt, this line's fewest ${round1(ownLow)}`);
  if (input !== null && peerLow !== null && input > peerLow + promptTolerance(peerLow))
    reasons.push(`prompt tokens ${input} for the same prompt, its paid peers' fewest ${round1(peerLow)}`);

  // Completion tokens: against the answer's length at the most tokens per character an honest line shows.
  const own = ratioOf(x.track?.ratio);
  const peerRatios = paid.map((p) => ratioOf(p.track?.ratio));
  const peerUsual = peerReference(
    x.tier,
    peerRatios.map((r) => r?.usual ?? null),
  );
  const peerMost = peerReference(
    x.tier,
    peerRatios.map((r) => r?.most ?? null),
  );
  const outputs = [
    { ratio: own, whose: "this line's usual" },
    { ratio: peerUsual === null || peerMost === null ? null : { usual: peerUsual, most: peerMost }, whose: "its paid peers' usual" },
  ];
  for (const { ratio, whose } of outputs) {
    if (output === null || ratio === null || chars === 0) continue;
    if (output > chars * ratio.most * (1 + OUTPUT_SLACK_SHARE) + OUTPUT_SLACK_TOKENS) {
      reasons.push(
        `completion tokens ${output} for ${chars} characters of answer, about ${Math.round(chars * ratio.usual)} at ${whose} tokens per character`,
      );
      break;
    }
  }
  const usualRatio = own?.usual ?? peerUsual;
  const expectedOutput = usualRatio === null || chars === 0 ? null : chars * usualRatio;

  const ownMean = usable(ownAnchor) ? ownAnchor.anchor : null;
  const peerMean = peerReference(
    x.tier,
    paid.map((p) => {
      const a = p.track?.prompt[x.variant];
      return usable(a) ? a.anchor : null;
    }),
  );
  const refs = [ownMean, peerMean].filter((v): v is number => v !== null);
  const billing: UsageBilling = {
    claimedInput: input,
    expectedInput: refs.length === 0 ? null : round1(Math.min(...refs)),
    claimedOutput: output,
    expectedOutput: expectedOutput === null ? null : round1(expectedOutput),
  };
  const judged = (input !== null && (ownLow !== null || peerLow !== null)) || (output !== null && expectedOutput !== null);
  const check = reasons.length > 0 ? failCheck("usage", `inflated usage: ${reasons.join("; ")}`) : judged ? passCheck("usage") : null;
  return { check, step, billing };
}

const rateAt = (n: number): number => (n <= USAGE_WARMUP ? 1 / n : 1 / USAGE_ANCHOR_PROBES);

/** Prompt tokens of one phrasing after one count: the mean, and the fewest while learning. */
function learnPrompt(a: TokenAnchor | undefined, value: number, learn: boolean): TokenAnchor {
  const cur = a ?? EMPTY_ANCHOR;
  const recent = [...cur.recent, sig7(value)].slice(-USAGE_RECENT);
  if (!learn) return { ...cur, recent };
  const n = cur.n + 1;
  const anchor = cur.anchor === null ? value : cur.anchor + (value - cur.anchor) * rateAt(n);
  const low = Math.min(value, cur.anchor === null ? value : (cur.low ?? cur.anchor));
  return { anchor: sig7(anchor), n: Math.min(n, USAGE_WARMUP + 1), recent, low: sig7(low) };
}

/** Tokens per character after one answer: the mean tokens over the mean characters, moving alike. */
function learnRatio(a: TokenAnchor | undefined, tokens: number, chars: number, learn: boolean): TokenAnchor {
  const cur = a ?? EMPTY_ANCHOR;
  const recent = [...cur.recent, sig7(tokens / chars)].slice(-USAGE_RECENT);
  if (!learn) return { ...cur, recent };
  const fresh = cur.anchor === null || cur.chars === undefined;
  const n = fresh ? 1 : cur.n + 1;
  const rate = rateAt(n);
  const meanChars = fresh ? chars : (cur.chars as number) + (chars - (cur.chars as number)) * rate;
  const meanTokens = fresh
    ? tokens
    : (cur.anchor as number) * (cur.chars as number) + (tokens - (cur.anchor as number) * (cur.chars as number)) * rate;
  return { anchor: sig7(meanTokens / meanChars), n: Math.min(n, USAGE_WARMUP + 1), recent, chars: sig7(meanChars) };
}

/** The track after one answer; `learn`: the line is healthy at full weight and the probe passed (usage included). Pure. */
export function stepUsage(t: UsageTrack | undefined, step: UsageStep, learn: boolean): UsageTrack {
  const cur = t ?? emptyUsageTrack();
  let next = cur;
  if (step.input !== null)
    next = { ...next, prompt: { ...next.prompt, [step.variant]: learnPrompt(cur.prompt[step.variant], step.input, learn) } };
  if (step.output !== null && step.chars > 0) next = { ...next, ratio: learnRatio(cur.ratio, step.output, step.chars, learn) };
  return next;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
/** Seven significant digits: stored with health per sample and phrasing (small JSON; a 1/2000 step still moves it). */
const sig7 = (x: number): number => Number(x.toPrecision(7));
