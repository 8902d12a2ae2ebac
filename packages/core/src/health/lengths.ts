// A line's usual answer length per sample (docs/scoring.md baselines): a fast recent mean, and an anchor
// learned only while the line is healthy at full weight, slowly, so that a degradation over hours
// cannot drag it along. Both in log(chars): lengths vary by a factor, not by an amount.
import type { LengthTrack } from "./health-types";

/** Passes averaged plainly before the anchor starts to move slowly; usable from ANCHOR_USABLE on. */
export const ANCHOR_WARMUP = 20;
export const ANCHOR_USABLE = 5;
/** After the warm-up the anchor moves by 1/ANCHOR_PROBES of the gap per pass (about a day of 45 s probes). */
export const ANCHOR_PROBES = 2000;
/** The recent mean moves by 1/RECENT_PROBES of the gap per pass. */
export const RECENT_PROBES = 12;

const EMPTY: LengthTrack = { anchor: null, anchorN: 0, recent: null };

/** The track after a passing answer of `chars` characters; `learnAnchor`: the line is healthy at full weight. */
export function trackLength(t: LengthTrack | undefined, chars: number, learnAnchor: boolean): LengthTrack {
  const cur = t ?? EMPTY;
  if (!(chars > 0) || !Number.isFinite(chars)) return cur;
  const x = Math.log(chars);
  const recent = cur.recent === null ? x : cur.recent + (x - cur.recent) / RECENT_PROBES;
  if (!learnAnchor) return { ...cur, recent };
  const n = cur.anchorN + 1;
  const rate = n <= ANCHOR_WARMUP ? 1 / n : 1 / ANCHOR_PROBES;
  const anchor = cur.anchor === null ? x : cur.anchor + (x - cur.anchor) * rate;
  return { anchor, anchorN: Math.min(n, ANCHOR_WARMUP + 1), recent };
}

/** The anchored usual length in chars, once enough passes are behind it; null before. */
export const anchoredLength = (t: LengthTrack | undefined): number | null =>
  t && t.anchor !== null && t.anchorN >= ANCHOR_USABLE ? Math.exp(t.anchor) : null;

/**
 * Recent length over anchored length of the sample whose answers shrank most (a downgrade may shorten
 * only the long answers); null while no sample has both.
 */
export function lengthRatio(tracks: Record<string, LengthTrack>): number | null {
  let worst: number | null = null;
  for (const sampleId in tracks) {
    const t = tracks[sampleId] as LengthTrack;
    if (t.recent === null || t.anchor === null || anchoredLength(t) === null) continue;
    const r = t.recent - t.anchor;
    if (worst === null || r < worst) worst = r;
  }
  return worst === null ? null : Math.exp(worst);
}
