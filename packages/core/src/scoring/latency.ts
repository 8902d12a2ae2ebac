// Latency: vs the sample's maxLatencyMs and the line's own p90; fast-and-short is suspicious.
import { baselineWeight } from "./baseline";
import { clamp01, fmt, positiveOrNull } from "./numbers";
import type { ComponentScore, ScoringContext } from "./score-probe";

/** Added to both sides of the latency ratio: 300 ms against a usual 100 ms is not "3× slower". */
export const LATENCY_SLACK_MS = 500;
/** Up to this multiple of the line's p90 (with slack) costs nothing. */
export const P90_TOLERANCE = 1.5;
/** Faster than this share of the usual p50 … */
export const SUSPICIOUS_LATENCY_RATIO = 0.25;
/** … and shorter than this share of the usual length: a canned or cut answer. */
export const SUSPICIOUS_LENGTH_RATIO = 0.5;
/** What a suspicious probe's latency component is capped at (once the baseline is warm). */
export const SUSPICIOUS_LATENCY_SCORE = 0.2;

export function scoreLatency(ctx: ScoringContext): ComponentScore {
  const { expect, observation, baseline, contentLength } = ctx;
  const ms = Number.isFinite(observation.latencyMs) ? Math.max(0, observation.latencyMs) : 0;
  const reasons: string[] = [];
  let score = 1;

  // Over the limit: down linearly to 0 at twice the limit.
  const max = positiveOrNull(expect.maxLatencyMs);
  if (max !== null && ms > max) {
    score = Math.min(score, clamp01(2 - ms / max));
    reasons.push(`took ${fmt(ms)} ms, above maxLatencyMs ${fmt(max)}`);
  }

  // A tenth of a healthy line's probes are over its p90 by definition, so up to
  // P90_TOLERANCE × p90 is normal; past it, down linearly to 0 at 3 × p90.
  const p90 = positiveOrNull(baseline.latencyP90);
  const wLatency = baselineWeight(baseline.latencySamples ?? baseline.samples);
  if (p90 !== null && wLatency > 0) {
    const ratio = (ms + LATENCY_SLACK_MS) / (p90 + LATENCY_SLACK_MS);
    const own = clamp01(1 - (ratio - P90_TOLERANCE) / (3 - P90_TOLERANCE));
    const relative = 1 - wLatency * (1 - own);
    if (relative < 1) {
      score = Math.min(score, relative);
      reasons.push(`took ${fmt(ms)} ms, much slower than this line's p90 ${fmt(p90)} ms`);
    }
  }

  const p50 = positiveOrNull(baseline.latencyP50);
  const usualLength = positiveOrNull(baseline.lengthMedian);
  const wBoth = Math.min(wLatency, baselineWeight(baseline.lengthSamples ?? baseline.samples));
  if (
    p50 !== null &&
    usualLength !== null &&
    wBoth > 0 &&
    ms < p50 * SUSPICIOUS_LATENCY_RATIO &&
    contentLength < usualLength * SUSPICIOUS_LENGTH_RATIO
  ) {
    score = Math.min(score, 1 - wBoth * (1 - SUSPICIOUS_LATENCY_SCORE));
    reasons.push(
      `answered in ${fmt(ms)} ms with ${contentLength} chars, much faster and shorter than usual ` +
        `(p50 ${fmt(p50)} ms, median ${fmt(usualLength)} chars): suspicious`,
    );
  }

  return { score: clamp01(score), reasons };
}
