// A line's fingerprint record for one sample, persisted with its health: per phrasing (variant)
// the anchored answers and the latest ones, and the sample's two statistics (its own anchor, its
// paid peers'). Plain JSON (docs/scoring.md#what-a-relay-can-fake).
import { type AnswerAnchor, learnAnswer } from "./anchor";
import { stepStatistic } from "./sequential";

export interface FingerprintVariant {
  /** Learned only while the line is healthy at full weight and both statistics stand at 0. */
  anchor: AnswerAnchor;
  /** The latest answers to this phrasing, newest last (RECENT_ANSWERS kept): "now" in a verdict. */
  recent: string[];
}

export interface FingerprintTrack {
  /** The CUSUM statistic against the line's own anchors. */
  own: number;
  /** The CUSUM statistic against its paid peers' anchors (route mates naming the same model). */
  peers: number;
  /** The threshold the latest answer was judged by (the statistics are failing at or above it). */
  threshold: number;
  /** Per phrasing (variantKey): its anchor and latest answers. */
  variants: Record<string, FingerprintVariant>;
}

/** What one probe's fingerprint judgment hands to the health machine (and is stored with the result). */
export interface FingerprintStep {
  /** variantKey of the phrasing the probe sent. */
  variant: string;
  /** The answer's class (normalizeFingerprintAnswer). */
  answer: string;
  /** What the answer adds to each statistic; null: no usable reference (nothing added). */
  own: number | null;
  peers: number | null;
  threshold: number;
  /** What moved, when this answer leaves a statistic at or above the threshold (for the event's detail). */
  moved?: FingerprintMoveNote[];
}

/** The part of a judgment's FingerprintMove an event names. */
export interface FingerprintMoveNote {
  reference: "own" | "peers";
  detail: string;
  anchor: Array<{ answer: string; share: number }>;
  now: Array<{ answer: string; count: number }>;
}

/** Latest answers kept per phrasing. */
export const RECENT_ANSWERS = 8;
/** Phrasings kept per sample: a phrasing an operator removed is dropped when a newer one needs the room. */
export const VARIANTS_KEPT = 8;

export const emptyFingerprintTrack = (threshold: number): FingerprintTrack => ({ own: 0, peers: 0, threshold, variants: {} });

/**
 * The track after one judged answer. `learn`: the line is healthy at full weight and the probe passed;
 * the anchor then learns the answer, but only while both statistics stood at 0 before it: a run of
 * misses must not teach the anchor it is judged against, and a line whose answers never matched its
 * paid peers' cannot anchor itself there. Pure; never mutates `t`.
 */
export function stepFingerprint(t: FingerprintTrack | undefined, step: FingerprintStep, learn: boolean): FingerprintTrack {
  const cur = t ?? emptyFingerprintTrack(step.threshold);
  const quiet = cur.own === 0 && cur.peers === 0;
  const was = cur.variants[step.variant];
  const recent = [...(was?.recent ?? []), step.answer].slice(-RECENT_ANSWERS);
  const anchor = learn && quiet ? learnAnswer(was?.anchor, step.answer) : (was?.anchor ?? { shares: {}, n: 0 });
  const variants = { ...cur.variants, [step.variant]: { anchor, recent } };
  return {
    own: step.own === null ? cur.own : stepStatistic(cur.own, step.own, step.threshold),
    peers: step.peers === null ? cur.peers : stepStatistic(cur.peers, step.peers, step.threshold),
    threshold: step.threshold,
    variants: dropOldest(variants, step.variant),
  };
}

/** At most VARIANTS_KEPT phrasings: the one with the fewest anchored answers goes (never the current one). */
function dropOldest(variants: Record<string, FingerprintVariant>, current: string): Record<string, FingerprintVariant> {
  const keys = Object.keys(variants);
  if (keys.length <= VARIANTS_KEPT) return variants;
  const drop = keys.filter((k) => k !== current).sort((a, b) => (variants[a]?.anchor.n ?? 0) - (variants[b]?.anchor.n ?? 0))[0];
  const out = { ...variants };
  if (drop !== undefined) delete out[drop];
  return out;
}

/** Which references a track is failing against at its threshold (a statistic at or above it). */
export function failingReferences(t: FingerprintTrack): Array<"own" | "peers"> {
  const out: Array<"own" | "peers"> = [];
  if (t.own >= t.threshold) out.push("own");
  if (t.peers >= t.threshold) out.push("peers");
  return out;
}

/** "owl 6, cat 2" of a list of answers, most common first. */
export function tallyAnswers(answers: readonly string[]): Array<{ answer: string; count: number }> {
  const counts = new Map<string, number>();
  for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1);
  return [...counts.entries()].sort((x, y) => y[1] - x[1]).map(([answer, count]) => ({ answer, count }));
}
