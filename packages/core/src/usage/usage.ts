// Usage honesty (docs/scoring.md#what-a-relay-can-fake): the prompt tokens a line reports for the
// same golden prompt (per sample and phrasing) on the same model are held to its own anchor and to
// its paid peers'; the completion tokens to the answer's length at the line's (and peers') usual
// tokens per character. Reporting more than that fails the `usage` check, and the claimed and
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
  /** A plain mean of the first USAGE_WARMUP values, then moving by 1/USAGE_ANCHOR_PROBES per value; null: none yet. */
  anchor: number | null;
  n: number;
  /** The latest values, newest last (USAGE_RECENT kept): their median is where the line is now. */
  recent: number[];
}

export interface UsageTrack {
  /** Per phrasing (variantKey): the prompt tokens the line reports for it. */
  prompt: Record<string, TokenAnchor>;
  /** Completion tokens per character of answer. */
  ratio: TokenAnchor;
  /** The latest judged usage check failed, with this detail; absent while it passes (events name the change). */
  failing?: string;
}

/** What the health machine applies (stepUsage); stored with the result. */
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
 * Prompt tokens above the reference by more than max(SLACK, SHARE × reference) fail: honest counts
 * move by a token or two (a nonce tokenises differently each time), inflation by a share. Against
 * the line's own anchor each claim is held to it; against the peers the median of the line's latest
 * claims, with a token more of slack (two providers of one model may frame a prompt a token apart).
 */
export const PROMPT_SLACK_TOKENS = 3;
export const PEER_SLACK_TOKENS = 4;
export const PROMPT_SLACK_SHARE = 0.1;
/** A young anchor is a mean of few counts: UNCERTAINTY_TOKENS / √n more slack (±0.65 token at 21 counts). */
export const UNCERTAINTY_TOKENS = 3;
/**
 * Completion tokens above chars × the usual tokens per character by more than this share + slack
 * fail (the line's own ratio; the peers' with more slack: a short answer's few tokens make a ratio
 * of two honest lines differ a lot).
 */
export const OUTPUT_SLACK_SHARE = 0.12;
export const OUTPUT_SLACK_TOKENS = 3;
export const OUTPUT_PEER_SLACK_TOKENS = 5;

const EMPTY_ANCHOR: TokenAnchor = { anchor: null, n: 0, recent: [] };
export const emptyUsageTrack = (): UsageTrack => ({ prompt: {}, ratio: EMPTY_ANCHOR });

const usable = (a: TokenAnchor | undefined): number | null => (a && a.anchor !== null && a.n >= USAGE_USABLE ? a.anchor : null);
/** The slack a young anchor adds: its mean is of few counts. */
const uncertainty = (a: TokenAnchor | undefined): number => UNCERTAINTY_TOKENS / Math.sqrt(Math.max(1, a?.n ?? 1));
const validCount = (x: number | null): x is number => x !== null && Number.isFinite(x) && x >= 0;

function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** The paid peers' anchors' median, when enough paid peers have one (a free line needs one, a paid line two). */
function peerReference(tier: Tier, values: Array<number | null>): number | null {
  const got = values.filter((v): v is number => v !== null);
  return got.length >= (tier === "paid" ? 2 : 1) ? median(got) : null;
}

const promptTolerance = (ref: number, slack: number): number => Math.max(slack, PROMPT_SLACK_SHARE * ref);

/** The usage check of one answer. Pure. */
export function judgeUsage(x: UsageInput): UsageJudgment {
  const input = validCount(x.claimed.input) ? x.claimed.input : null;
  const output = validCount(x.claimed.output) ? x.claimed.output : null;
  const chars = Number.isFinite(x.answerChars) && x.answerChars > 0 ? x.answerChars : 0;
  const step: UsageStep = { variant: x.variant, input, output, chars };
  const paid = x.peers.filter((p) => p.tier === "paid");
  const reasons: string[] = [];

  // Prompt tokens: each claim against the line's own anchor; where the line is now against the peers'.
  const ownAnchor = x.track?.prompt[x.variant];
  const own = usable(ownAnchor);
  const peers = peerReference(
    x.tier,
    paid.map((p) => usable(p.track?.prompt[x.variant])),
  );
  if (input !== null && own !== null && input > own + promptTolerance(own, PROMPT_SLACK_TOKENS) + uncertainty(ownAnchor))
    reasons.push(`prompt tokens ${input} for the same prompt, this line's anchor ${round1(own)}`);
  const level = input === null ? null : median([...(x.track?.prompt[x.variant]?.recent ?? []), input].slice(-USAGE_RECENT));
  if (
    level !== null &&
    peers !== null &&
    level > peers + promptTolerance(peers, PEER_SLACK_TOKENS) + UNCERTAINTY_TOKENS / Math.sqrt(USAGE_USABLE)
  )
    reasons.push(`prompt tokens ${round1(level)} (median of the latest) for the same prompt, paid peers ${round1(peers)}`);

  // Completion tokens: against the answer's length at the usual tokens per character.
  const ownRatio = usable(x.track?.ratio);
  const peerRatio = peerReference(
    x.tier,
    paid.map((p) => usable(p.track?.ratio)),
  );
  const outputs = [
    { ratio: ownRatio, slack: OUTPUT_SLACK_TOKENS, whose: "this line's usual" },
    { ratio: peerRatio, slack: OUTPUT_PEER_SLACK_TOKENS, whose: "its paid peers' usual" },
  ];
  for (const { ratio, slack, whose } of outputs) {
    if (output === null || ratio === null || chars === 0) continue;
    const expected = chars * ratio;
    if (output > expected * (1 + OUTPUT_SLACK_SHARE) + slack) {
      reasons.push(
        `completion tokens ${output} for ${chars} characters of answer, about ${Math.round(expected)} at ${whose} tokens per character`,
      );
      break;
    }
  }
  const ratio = ownRatio ?? peerRatio;
  const expectedOutput = ratio === null || chars === 0 ? null : chars * ratio;

  const refs = [own, peers].filter((v): v is number => v !== null);
  const billing: UsageBilling = {
    claimedInput: input,
    expectedInput: refs.length === 0 ? null : round1(Math.min(...refs)),
    claimedOutput: output,
    expectedOutput: expectedOutput === null ? null : round1(expectedOutput),
  };
  const judged = (input !== null && (own !== null || peers !== null)) || (output !== null && expectedOutput !== null);
  const check = reasons.length > 0 ? failCheck("usage", `inflated usage: ${reasons.join("; ")}`) : judged ? passCheck("usage") : null;
  return { check, step, billing };
}

function learnValue(a: TokenAnchor | undefined, value: number, learn: boolean): TokenAnchor {
  const cur = a ?? EMPTY_ANCHOR;
  const recent = [...cur.recent, sig7(value)].slice(-USAGE_RECENT);
  if (!learn) return { ...cur, recent };
  const n = cur.n + 1;
  const rate = n <= USAGE_WARMUP ? 1 / n : 1 / USAGE_ANCHOR_PROBES;
  const anchor = cur.anchor === null ? value : cur.anchor + (value - cur.anchor) * rate;
  return { anchor: sig7(anchor), n: Math.min(n, USAGE_WARMUP + 1), recent };
}

/** The track after one answer; `learn`: the line is healthy at full weight and the probe passed (usage included). Pure. */
export function stepUsage(t: UsageTrack | undefined, step: UsageStep, learn: boolean): UsageTrack {
  const cur = t ?? emptyUsageTrack();
  let next = cur;
  if (step.input !== null)
    next = { ...next, prompt: { ...next.prompt, [step.variant]: learnValue(cur.prompt[step.variant], step.input, learn) } };
  if (step.output !== null && step.chars > 0) next = { ...next, ratio: learnValue(cur.ratio, step.output / step.chars, learn) };
  return next;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
/** Seven significant digits: stored with health per sample and phrasing (small JSON; a 1/2000 step still moves it). */
const sig7 = (x: number): number => Number(x.toPrecision(7));
