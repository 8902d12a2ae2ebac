// A line's score and components over its recent probes (docs/scoring.md), for health and the dashboard.
import type { ScoreComponents } from "../types";
import { roundTo } from "./numbers";
import { COMPONENT_NAMES } from "./weights";

export const LINE_SCORE_WINDOW_MS = 10 * 60 * 1000;

export interface ScoredResult {
  score: number;
  /** ms since epoch */
  startedAt: number;
  /** The sample's weight; 1 when absent. */
  weight?: number;
}

/**
 * The mean score of the probes that started in [now − windowMs, now], each counted by its
 * sample's weight (1 by default), rounded to 0.1; null when there are none.
 */
export function lineScore(results: readonly ScoredResult[], now: number, windowMs: number = LINE_SCORE_WINDOW_MS): number | null {
  let sum = 0;
  let total = 0;
  for (const r of results) {
    if (!(r.startedAt >= now - windowMs && r.startedAt <= now) || !Number.isFinite(r.score)) continue;
    const w = sampleWeight(r.weight);
    sum += w * r.score;
    total += w;
  }
  return total === 0 ? null : roundTo(sum / total, 1);
}

/** What a sample's probes count for in a line score: its weight when finite and positive, 1 when absent, else 0. */
export function sampleWeight(weight: number | undefined): number {
  return weight === undefined ? 1 : Number.isFinite(weight) && weight > 0 ? weight : 0;
}

/** The scores of one sample's probes, summed (a time bucket of the dashboard's trend, read summed from the database). */
export interface SampleScoreSum {
  scoreSum: number;
  probes: number;
  weight?: number;
}

/**
 * lineScore over probes given as per-sample sums: the same sample-weighted mean, rounded to 0.1; null
 * when nothing weighs. The dashboard's score trend is this per bucket.
 */
export function summedLineScore(sums: Iterable<SampleScoreSum>): number | null {
  let sum = 0;
  let total = 0;
  for (const s of sums) {
    const w = sampleWeight(s.weight);
    sum += w * s.scoreSum;
    total += w * s.probes;
  }
  return total === 0 ? null : roundTo(sum / total, 1);
}

/** The mean of each component (rounded to 0.001); null for no results. The caller picks the window. */
export function averageComponents(results: readonly { components: ScoreComponents }[]): ScoreComponents | null {
  if (results.length === 0) return null;
  const sums: ScoreComponents = { length: 0, fields: 0, freshness: 0, status: 0, latency: 0 };
  for (const { components } of results) {
    for (const name of COMPONENT_NAMES) sums[name] += components[name];
  }
  for (const name of COMPONENT_NAMES) sums[name] = roundTo(sums[name] / results.length, 3);
  return sums;
}
