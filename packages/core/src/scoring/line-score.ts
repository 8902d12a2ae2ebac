// A line's score and components over its recent probes (SPEC §4), for health and the dashboard.
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
    const w = r.weight === undefined ? 1 : Number.isFinite(r.weight) && r.weight > 0 ? r.weight : 0;
    sum += w * r.score;
    total += w;
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
