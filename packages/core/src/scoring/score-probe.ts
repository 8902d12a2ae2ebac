// Scoring one probe (SPEC §4): five components, a weighted score, pass/fail, reasons in words.
import type { ErrorClass, SampleExpect, ScoreComponents } from "../types";
import type { Baseline } from "./baseline";
import { scoreFields } from "./fields";
import { scoreFreshness } from "./freshness";
import { scoreLatency } from "./latency";
import { scoreLength } from "./length";
import { clamp01, roundTo } from "./numbers";
import { hardFailureReason, isHardFailure, scoreStatus } from "./status";
import { charLength } from "./text";
import { CHECK_FLOOR, DEFAULT_WEIGHTS, failedChecks, PASS_SCORE, type ScoreWeights, scoreFromComponents } from "./weights";

/** What the shell saw of one probe. */
export interface ProbeObservation {
  status: number | null;
  errorClass: ErrorClass | null;
  latencyMs: number;
  /** The answer text the adapter found; null when there is none. */
  content: string | null;
  /** The whole response body (parsed), for requiredFields outside `content.`. */
  json: unknown;
  contentHash: string | null;
  /** The nonce filled into this probe's request. */
  nonce: string;
  /** Optional detail for a hard failure, e.g. the adapter's message. */
  errorMessage?: string;
}

export interface ScoreProbeInput {
  expect: SampleExpect;
  observation: ProbeObservation;
  /** computeBaseline() of this (line, sample)'s earlier results; EMPTY_BASELINE when cold. */
  baseline: Baseline;
  weights?: ScoreWeights;
}

export interface ScoredProbe {
  components: ScoreComponents;
  /** 0–100, rounded to 0.1. */
  score: number;
  passed: boolean;
  hardFailure: boolean;
  reasons: string[];
  /** In Unicode code points. */
  contentLength: number;
}

export interface ComponentScore {
  score: number;
  reasons: string[];
}

/** What each component function reads. */
export interface ScoringContext {
  expect: SampleExpect;
  observation: ProbeObservation;
  baseline: Baseline;
  /** The answer, "" when there is none. */
  content: string;
  contentLength: number;
}

const ZERO: ScoreComponents = Object.freeze({ length: 0, fields: 0, freshness: 0, status: 0, latency: 0 });

export function scoreProbe(input: ScoreProbeInput): ScoredProbe {
  const { expect, observation, baseline } = input;
  const content = observation.content ?? "";
  const contentLength = charLength(content);

  if (isHardFailure(observation)) {
    return {
      components: { ...ZERO },
      score: 0,
      passed: false,
      hardFailure: true,
      reasons: [hardFailureReason(observation)],
      contentLength,
    };
  }

  const ctx: ScoringContext = { expect, observation, baseline, content, contentLength };
  const parts = {
    length: scoreLength(ctx),
    fields: scoreFields(ctx),
    freshness: scoreFreshness(ctx),
    status: scoreStatus(observation),
    latency: scoreLatency(ctx),
  };
  // Rounded so that a human recomputing the score from the stored components gets the same.
  const components: ScoreComponents = {
    length: roundTo(clamp01(parts.length.score), 3),
    fields: roundTo(clamp01(parts.fields.score), 3),
    freshness: roundTo(clamp01(parts.freshness.score), 3),
    status: roundTo(clamp01(parts.status.score), 3),
    latency: roundTo(clamp01(parts.latency.score), 3),
  };
  const score = scoreFromComponents(components, input.weights ?? DEFAULT_WEIGHTS);
  const failed = failedChecks(components);
  return {
    components,
    score,
    passed: score >= PASS_SCORE && failed.length === 0,
    hardFailure: false,
    reasons: [
      ...(failed.length > 0 ? [`failed check: ${failed.join(", ")} below ${CHECK_FLOOR}`] : []),
      ...parts.status.reasons,
      ...parts.length.reasons,
      ...parts.fields.reasons,
      ...parts.freshness.reasons,
      ...parts.latency.reasons,
    ],
    contentLength,
  };
}
