// Length: vs the sample's minLength/maxLength and vs the line's own median for the sample.
import { baselineWeight } from "./baseline";
import { failCheck, type ProbeCheck, passCheck } from "./checks";
import { clamp01, fmt, positiveOrNull } from "./numbers";
import type { ComponentScore, ScoringContext } from "./score-probe";

/**
 * Added to both sides of the length ratio so that short answers (a number, a word) are not
 * called truncated for a few characters: "155" against a usual "155 minutes" is fine.
 */
export const LENGTH_SLACK_CHARS = 20;

/**
 * Share of the usual length → score, continuous. At or above 80% of the median: 1 (normal
 * variation). Between half and 80%: linearly down to 0.5. Below half is truncation and falls
 * off as 4r³: 40% of the median scores 0.26, 30% scores 0.11, nothing scores 0.
 */
export function relativeLengthScore(ratio: number): number {
  if (!(ratio >= 0)) return 0;
  if (ratio >= 0.8) return 1;
  if (ratio >= 0.5) return 0.5 + ((ratio - 0.5) / 0.3) * 0.5;
  return 4 * ratio ** 3;
}

/** Below this share of the anchored usual length an answer is truncated, whatever minLength says. */
export const ANCHORED_LENGTH_SHARE = 0.5;

export function scoreLength(ctx: ScoringContext): ComponentScore {
  const { contentLength: n, expect, baseline, anchoredLength } = ctx;
  if (n === 0) return { score: 0, reasons: ["empty answer"], checks: [failCheck("content", "empty answer")] };
  const reasons: string[] = [];
  const checks: ProbeCheck[] = [];
  let score = 1;

  const min = positiveOrNull(expect.minLength);
  if (min !== null && n < min) {
    score = Math.min(score, n / min);
    reasons.push(`content ${n} chars, below minLength ${fmt(min)}`);
    checks.push(failCheck("minLength", `${n} chars, below minLength ${fmt(min)}`));
  } else if (min !== null) checks.push(passCheck("minLength"));

  const anchored = positiveOrNull(anchoredLength);
  // With the same slack as the median comparison: "155" against a usual "155 minutes" is not cut.
  if (anchored !== null && n + LENGTH_SLACK_CHARS < ANCHORED_LENGTH_SHARE * (anchored + LENGTH_SLACK_CHARS)) {
    score = Math.min(score, relativeLengthScore(n / anchored));
    const detail = `${n} chars, below half of this line's anchored usual ${fmt(anchored)} (truncated?)`;
    reasons.push(`content ${detail}`);
    checks.push(failCheck("anchoredLength", detail));
  } else if (anchored !== null) checks.push(passCheck("anchoredLength"));
  const max = positiveOrNull(expect.maxLength);
  if (max !== null && n > max) {
    score = Math.min(score, max / n);
    reasons.push(`content ${n} chars, above maxLength ${fmt(max)}`);
  }

  const usual = positiveOrNull(baseline.lengthMedian);
  const w = baselineWeight(baseline.lengthSamples ?? baseline.samples);
  if (usual !== null && w > 0) {
    const ratio = (n + LENGTH_SLACK_CHARS) / (usual + LENGTH_SLACK_CHARS);
    // Cold start to warm: the line's own median counts more as probes accumulate.
    const relative = 1 - w * (1 - relativeLengthScore(ratio));
    if (relative < 1) {
      score = Math.min(score, relative);
      reasons.push(
        ratio < 0.5
          ? `content ${n} chars, below half of this line's median ${fmt(usual)} (truncated?)`
          : `content ${n} chars, shorter than this line's median ${fmt(usual)}`,
      );
    }
  }
  return { score: clamp01(score), reasons, checks };
}
