// A line's anchored answer distribution for one phrasing of a fingerprint sample: the shares of
// its answer classes, learned only while the line is healthy at full weight (like the length
// anchors), as a plain mean of up to ANSWERS_MAX answers and then moving by 1/ANSWERS_MAX per
// answer, so a slow change cannot drag it (docs/scoring.md#what-a-relay-can-fake).

/** One phrasing's anchor: answer class → share (the shares sum to 1), and the answers behind it. */
export interface AnswerAnchor {
  shares: Record<string, number>;
  /** Answers learned (capped at ANSWERS_MAX): the precision of the shares. */
  n: number;
}

/** Answers a phrasing's anchor needs before it is compared with (the line's own, or a peer's). */
export const ANSWERS_USABLE = 20;
/** A plain mean up to this many answers, then each new one moves the shares by 1/ANSWERS_MAX. */
export const ANSWERS_MAX = 2000;
/** Answer classes an anchor keeps; the rarest of the rest are pooled in OTHER_ANSWERS. */
export const ANSWER_CLASSES = 8;
export const OTHER_ANSWERS = "<other>";
/** An answer whose share is at least this is in the anchor's support: the answers it usually gives. */
export const SUPPORT_SHARE = 0.2;
/**
 * The usual miss rate (answers outside the support) is an upper bound, never below MISS_FLOOR:
 * the false-alarm bound holds only while it is at least the true rate (sequential.ts).
 */
export const MISS_FLOOR = 0.05;
/** A phrasing that misses its own support this often cannot tell models apart: no evidence from it. */
export const MISS_CAP = 0.35;
/** Pseudo-answers of the miss-rate prior: one miss in ten (a young anchor is not trusted to be strict). */
const PRIOR_MISSES = 1;
const PRIOR_ANSWERS = 10;
/** z of the one-sided upper bound (Wilson) on the miss rate: ~90%. */
const MISS_Z = 1.2816;

export const EMPTY_ANSWER_ANCHOR: Readonly<AnswerAnchor> = Object.freeze({ shares: Object.freeze({}), n: 0 });

/** The anchor after learning one more answer. Pure; never mutates `a`. */
export function learnAnswer(a: AnswerAnchor | undefined, answer: string): AnswerAnchor {
  const cur = a ?? EMPTY_ANSWER_ANCHOR;
  const n = Math.min(ANSWERS_MAX, cur.n + 1);
  const rate = 1 / n;
  const shares: Record<string, number> = {};
  for (const [k, s] of Object.entries(cur.shares)) shares[k] = s * (1 - rate);
  shares[answer] = (shares[answer] ?? 0) + rate;
  return { shares: keepClasses(shares), n };
}

/** Six significant digits: what is stored with health for every answer class (the JSON stays small). */
const sig6 = (x: number): number => Number(x.toPrecision(6));

/** At most ANSWER_CLASSES classes: the smallest are pooled (their answers are misses anyway). */
function keepClasses(shares: Record<string, number>): Record<string, number> {
  const entries = Object.entries(shares)
    .filter(([, s]) => s > 1e-6)
    .map(([k, s]): [string, number] => [k, sig6(s)]);
  if (entries.length <= ANSWER_CLASSES) return Object.fromEntries(entries);
  entries.sort((x, y) => y[1] - x[1]);
  const kept = entries.filter(([k]) => k !== OTHER_ANSWERS).slice(0, ANSWER_CLASSES - 1);
  const keptShare = kept.reduce((acc, [, s]) => acc + s, 0);
  return { ...Object.fromEntries(kept), [OTHER_ANSWERS]: Math.max(0, 1 - keptShare) };
}

/** The answers the anchor usually gives (share ≥ SUPPORT_SHARE), most common first. */
export function anchorSupport(a: AnswerAnchor): string[] {
  return Object.entries(a.shares)
    .filter(([k, s]) => s >= SUPPORT_SHARE && k !== OTHER_ANSWERS)
    .sort((x, y) => y[1] - x[1])
    .map(([k]) => k);
}

/**
 * An upper bound on how often a line with this anchor answers outside its support: the Wilson
 * bound (~90%) on the observed share with a prior of one miss in ten, at least MISS_FLOOR.
 */
export function anchorMissRate(a: AnswerAnchor): number {
  const inSupport = anchorSupport(a).reduce((acc, k) => acc + (a.shares[k] ?? 0), 0);
  const n = a.n + PRIOR_ANSWERS;
  const p = (a.n * Math.max(0, 1 - inSupport) + PRIOR_MISSES) / n;
  const z2 = MISS_Z * MISS_Z;
  const upper = (p + z2 / (2 * n) + MISS_Z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return Math.min(1, Math.max(MISS_FLOOR, upper));
}

/** The anchors of several lines pooled (each counts alike), for the peers' reference; null when none is usable. */
export function poolAnchors(anchors: readonly AnswerAnchor[]): AnswerAnchor | null {
  const usable = anchors.filter((a) => a.n >= ANSWERS_USABLE);
  if (usable.length === 0) return null;
  const shares: Record<string, number> = {};
  for (const a of usable) for (const [k, s] of Object.entries(a.shares)) shares[k] = (shares[k] ?? 0) + s / usable.length;
  return {
    shares: keepClasses(shares),
    n: Math.min(
      ANSWERS_MAX,
      usable.reduce((acc, a) => acc + a.n, 0),
    ),
  };
}

/** The anchor's answers as "owl 97%, cat 3%", most common first (for verdicts and events). */
export function describeAnchor(a: AnswerAnchor, max = 3): string {
  const top = Object.entries(a.shares)
    .sort((x, y) => y[1] - x[1])
    .slice(0, max)
    .map(([k, s]) => `${JSON.stringify(k)} ${s < 0.005 ? "<1" : Math.round(s * 100)}%`);
  return `${top.join(", ")} (${a.n} answers)`;
}
