// The fingerprint check of one probe (docs/scoring.md#what-a-relay-can-fake): the answer's class
// against the line's own anchor for that phrasing and against its paid peers' (route mates naming
// the same model), through the sequential test of sequential.ts. One answer outside the usual ones
// is ordinary nondeterminism and never fails the check: only a statistic at its threshold does, and
// then every answer of that sample fails it until the statistic falls back below.
import { brokenCheck, failCheck, type ProbeCheck, passCheck } from "../scoring/checks";
import type { Tier } from "../types";
import { ANSWERS_USABLE, type AnswerAnchor, anchorMissRate, anchorSupport, describeAnchor, MISS_CAP, poolAnchors } from "./anchor";
import { FINGERPRINT_FORMS, type FingerprintExpect, LONG_ANSWER, NO_ANSWER, normalizeFingerprintAnswer } from "./normalize";
import { answerLlr, SHAPE_BONUS, stepStatistic } from "./sequential";
import { type FingerprintStep, type FingerprintTrack, RECENT_ANSWERS, tallyAnswers } from "./track";
import { checkVariants } from "./variants";

/** A route mate naming the same model, as the shell last saw it. */
export interface FingerprintPeer {
  tier: Tier;
  /** Its health's `fingerprints[sampleId]`. */
  track: FingerprintTrack | null | undefined;
}

export interface FingerprintInput {
  /** The sample's `expect` (its `fingerprint` says the answer's form). */
  expect: { fingerprint?: FingerprintExpect; varies?: boolean; nonce?: boolean };
  /** The request as sent (after the phrasing and the template): temperature and token limit are checked. */
  request: Record<string, unknown>;
  /** variantKey of the phrasing sent. */
  variant: string;
  /** The answer text. */
  content: string;
  tier: Tier;
  /** This line's `health.fingerprints[sampleId]`; null before its first answer. */
  track: FingerprintTrack | null | undefined;
  peers: readonly FingerprintPeer[];
  /** fingerprintThreshold(...) for the line's fingerprint samples and interval. */
  threshold: number;
  /** The line's answers changed protocol shape recently (shapeChangedRecently): the threshold drops by SHAPE_BONUS. */
  shapeChanged?: boolean;
}

export type FingerprintReference = "own" | "peers";

/** What moved, for a verdict and its event: the anchor's answers against the latest ones. */
export interface FingerprintMove {
  reference: FingerprintReference;
  variant: string;
  statistic: number;
  threshold: number;
  anchor: { answers: Array<{ answer: string; share: number }>; n: number };
  now: Array<{ answer: string; count: number }>;
  detail: string;
}

export interface FingerprintJudgment {
  /** The `fingerprint` check: pass, fail (a statistic at its threshold) or broken (the sample cannot fingerprint). */
  check: ProbeCheck;
  /** What the health machine applies (stepFingerprint); null when the sample is broken. */
  step: FingerprintStep | null;
  /** The statistics after this answer, and the threshold they were held to. */
  own: number;
  peers: number;
  threshold: number;
  moved: FingerprintMove[];
}

/** Answers the token limit of a fingerprint sample allows at most: a short answer is a few words. */
export const FINGERPRINT_MAX_TOKENS = 32;
const TOKEN_LIMITS = ["max_tokens", "max_completion_tokens", "max_output_tokens"] as const;
/** Options of a choice, at most, and characters per option. */
const MAX_OPTIONS = 26;
const MAX_OPTION_CHARS = 60;
/** A phrasing whose anchored answers are mostly not short cannot tell models apart. */
const NOT_SHORT_SHARE = 0.5;

/**
 * Problems that make a sample unusable for fingerprints, each naming its field; empty when it is
 * usable. The API refuses such a sample; a stored one is `broken` at every probe with these reasons.
 */
export function checkFingerprintSample(sample: {
  request: Record<string, unknown>;
  expect: { fingerprint?: unknown; varies?: unknown; nonce?: unknown };
  variants?: unknown;
}): string[] {
  const problems: string[] = [];
  const spec: unknown = sample.expect.fingerprint;
  if (typeof spec !== "object" || spec === null || !("form" in spec) || !FINGERPRINT_FORMS.some((f) => f === spec.form))
    problems.push(`expect.fingerprint.form: one of ${FINGERPRINT_FORMS.join(", ")}`);
  else if (spec.form === "choice") {
    const options = "options" in spec ? spec.options : undefined;
    if (!Array.isArray(options) || options.length < 2 || options.length > MAX_OPTIONS)
      problems.push(`expect.fingerprint.options: 2–${MAX_OPTIONS} options for a choice`);
    else if (options.some((o) => typeof o !== "string" || o.trim() === "" || o.length > MAX_OPTION_CHARS))
      problems.push(`expect.fingerprint.options: each a non-empty string of at most ${MAX_OPTION_CHARS} characters`);
  } else if ("options" in spec && spec.options !== undefined) problems.push("expect.fingerprint.options: only for form choice");
  if (sample.request.temperature !== 0)
    problems.push("request.temperature: must be 0 (a fingerprint is the answer a model gives at temperature 0)");
  const limits = TOKEN_LIMITS.filter((k) => sample.request[k] !== undefined);
  if (limits.length === 0)
    problems.push(`request.max_tokens: a fingerprint sample limits its answer (at most ${FINGERPRINT_MAX_TOKENS} tokens)`);
  for (const k of limits) {
    const v = sample.request[k];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > FINGERPRINT_MAX_TOKENS)
      problems.push(`request.${k}: at most ${FINGERPRINT_MAX_TOKENS} (a fingerprint answer is a few words, not a long answer)`);
  }
  if (sample.expect.varies === true) problems.push("expect.varies: a fingerprint answer is the same every time by design");
  if (sample.expect.nonce === true)
    problems.push("expect.nonce: echoing a nonce makes the answer long; put {{nonce}} in the prompt without expecting it back");
  problems.push(...checkVariants(sample.request, sample.variants));
  return problems;
}

/** The reference the peers give: their anchors for this phrasing pooled, when enough paid peers have one. */
function peerAnchor(x: FingerprintInput): AnswerAnchor | null {
  // Paid lines are the reference: a free line needs one, a paid line two (against a single paid
  // peer it is one word against another, and neither can be told to be the odd one).
  const anchors = x.peers.flatMap((p) => {
    const a = p.tier === "paid" ? p.track?.variants[x.variant]?.anchor : undefined;
    return a && a.n >= ANSWERS_USABLE ? [a] : [];
  });
  return anchors.length >= (x.tier === "paid" ? 2 : 1) ? poolAnchors(anchors) : null;
}

/** The LLR of an answer against a reference; null when the reference cannot tell (too young, or too varied). */
function llrAgainst(a: AnswerAnchor | null | undefined, answer: string): number | null {
  if (!a || a.n < ANSWERS_USABLE) return null;
  const p0 = anchorMissRate(a);
  if (p0 > MISS_CAP) return null;
  return answerLlr(!anchorSupport(a).includes(answer), p0);
}

const notShort = (a: AnswerAnchor | undefined): boolean =>
  a !== undefined && a.n >= ANSWERS_USABLE && (a.shares[LONG_ANSWER] ?? 0) + (a.shares[NO_ANSWER] ?? 0) >= NOT_SHORT_SHARE;

/** The fingerprint check of one answer. Pure. */
export function judgeFingerprint(x: FingerprintInput): FingerprintJudgment {
  const threshold = Math.max(1, x.threshold - (x.shapeChanged ? SHAPE_BONUS : 0));
  const own0 = x.track?.own ?? 0;
  const peers0 = x.track?.peers ?? 0;
  const problems = checkFingerprintSample({ request: x.request, expect: x.expect });
  const spec = x.expect.fingerprint;
  if (problems.length > 0 || spec === undefined)
    return { check: brokenCheck("fingerprint", problems.join("; ")), step: null, own: own0, peers: peers0, threshold, moved: [] };

  const answer = normalizeFingerprintAnswer(x.content, spec);
  const mine = x.track?.variants[x.variant];
  const peers = peerAnchor(x);
  const broken = notShort(mine?.anchor);
  const ownLlr = broken ? null : llrAgainst(mine?.anchor, answer);
  const peersLlr = broken ? null : llrAgainst(peers, answer);
  const step: FingerprintStep = { variant: x.variant, answer, own: ownLlr, peers: peersLlr, threshold };
  const own = ownLlr === null ? own0 : stepStatistic(own0, ownLlr, threshold);
  const peersStat = peersLlr === null ? peers0 : stepStatistic(peers0, peersLlr, threshold);
  if (broken) {
    const detail = `this line's answers to the phrasing are not short (${describeAnchor(mine?.anchor ?? { shares: {}, n: 0 })}): it cannot fingerprint the model`;
    return { check: brokenCheck("fingerprint", detail), step, own, peers: peersStat, threshold, moved: [] };
  }
  const recent = [...(mine?.recent ?? []), answer].slice(-RECENT_ANSWERS);
  const moved: FingerprintMove[] = [];
  if (own >= threshold) moved.push(describeMove("own", x.variant, own, threshold, mine?.anchor ?? null, recent));
  if (peersStat >= threshold) moved.push(describeMove("peers", x.variant, peersStat, threshold, peers, recent));
  if (moved.length > 0)
    step.moved = moved.map(({ reference, detail, anchor, now }) => ({ reference, detail, anchor: anchor.answers, now }));
  const check =
    moved.length === 0
      ? passCheck("fingerprint")
      : failCheck("fingerprint", `answer ${JSON.stringify(answer)}: ${moved.map((m) => m.detail).join("; ")}`);
  return { check, step, own, peers: peersStat, threshold, moved };
}

function describeMove(
  reference: FingerprintReference,
  variant: string,
  statistic: number,
  threshold: number,
  anchor: AnswerAnchor | null,
  recent: string[],
): FingerprintMove {
  const answers = Object.entries(anchor?.shares ?? {})
    .sort((a, b) => b[1] - a[1])
    .map(([answer, share]) => ({ answer, share: Math.round(share * 1000) / 1000 }));
  const now = tallyAnswers(recent);
  const what = reference === "own" ? "moved away from this line's own anchored answers" : "does not match its paid peers' answers";
  const nowText = now.map((t) => `${JSON.stringify(t.answer)} ${t.count}`).join(", ");
  const detail =
    `${what} (phrasing ${variant}: anchor ${anchor ? describeAnchor(anchor) : "none"}; now ${nowText} of the latest ${recent.length}; ` +
    `evidence ${round1(statistic)} ≥ ${round1(threshold)})`;
  return { reference, variant, statistic, threshold, anchor: { answers, n: anchor?.n ?? 0 }, now, detail };
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
