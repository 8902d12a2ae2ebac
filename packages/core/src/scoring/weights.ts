// docs/scoring.md: the five components and their default weights (content 65, status + latency 35).
import type { ScoreComponents } from "../types";
import { clamp01, roundTo } from "./numbers";

export type ScoreWeights = ScoreComponents;

export const COMPONENT_NAMES = ["length", "fields", "freshness", "status", "latency"] as const;

export const DEFAULT_WEIGHTS: Readonly<ScoreWeights> = Object.freeze({
  length: 25,
  fields: 20,
  freshness: 20,
  status: 20,
  latency: 15,
});

/** A probe passes at this score or above, unless it failed hard or failed a content check (checks.ts). */
export const PASS_SCORE = 60;

/**
 * The weighted mean of the components × 100, rounded to 0.1. Components are clamped to [0, 1]
 * and negative or non-finite weights count as 0; with no weight at all the score is 0.
 */
export function scoreFromComponents(components: ScoreComponents, weights: ScoreWeights = DEFAULT_WEIGHTS): number {
  let sum = 0;
  let total = 0;
  for (const name of COMPONENT_NAMES) {
    const w = Number.isFinite(weights[name]) && weights[name] > 0 ? weights[name] : 0;
    sum += w * clamp01(components[name]);
    total += w;
  }
  if (total === 0) return 0;
  return Math.min(100, roundTo((100 * sum) / total, 1));
}
