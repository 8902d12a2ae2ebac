// Scoring one probe (docs/scoring.md): five components, a weighted score, pass/fail, reasons in words.
import { type FingerprintInput, type FingerprintJudgment, judgeFingerprint } from "../fingerprint/judge";
import type { ErrorClass, SampleExpect, ScoreComponents } from "../types";
import { judgeUsage, type UsageInput, type UsageJudgment } from "../usage/usage";
import type { Baseline } from "./baseline";
import { FAILED_CHECK_SCORE, failedCheckNames, type ProbeCheck } from "./checks";
import { scoreFields } from "./fields";
import { scoreFreshness } from "./freshness";
import { scoreLatency } from "./latency";
import { scoreLength } from "./length";
import { clamp01, positiveOrNull, roundTo } from "./numbers";
import { hardFailureReason, isHardFailure, scoreStatus } from "./status";
import { charLength } from "./text";
import { DEFAULT_WEIGHTS, PASS_SCORE, type ScoreWeights, scoreFromComponents } from "./weights";

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
  /**
   * The line's anchored usual length for this sample (chars): learned only while the line was
   * healthy, so a slow degradation cannot drag it along (health's `lengths`); null while cold.
   */
  anchoredLength?: number | null;
  /** The usual length of the route's other lines answering this sample (chars); null when none. */
  peerLength?: number | null;
  weights?: ScoreWeights;
  /**
   * A fingerprint sample's references (the line's track, its peers', the threshold, the phrasing
   * sent); judged when the sample's `expect.fingerprint` is set (docs/scoring.md#what-a-relay-can-fake).
   */
  fingerprint?: Omit<FingerprintInput, "content" | "expect">;
  /** The usage the upstream reported and the references it is held to; absent: no usage check. */
  usage?: Omit<UsageInput, "answerChars">;
}

export interface ScoredProbe {
  components: ScoreComponents;
  /** 0–100, rounded to 0.1. */
  score: number;
  passed: boolean;
  hardFailure: boolean;
  /** Each expectation's verdict; empty for a hard failure (no answer to check). */
  checks: ProbeCheck[];
  reasons: string[];
  /** In Unicode code points. */
  contentLength: number;
  /** The fingerprint judgment (what the health machine applies: `fingerprint.step`); absent when not judged. */
  fingerprint?: FingerprintJudgment;
  /** The usage judgment (`usage.step` for the health machine, `usage.billing` the evidence); absent when not judged. */
  usage?: UsageJudgment;
}

export interface ComponentScore {
  score: number;
  reasons: string[];
  checks?: ProbeCheck[];
}

/** What each component function reads. */
export interface ScoringContext {
  expect: SampleExpect;
  observation: ProbeObservation;
  baseline: Baseline;
  /** The anchored usual length the length check holds the answer to (chars); null: none yet. */
  anchoredLength: number | null;
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
      checks: [],
      reasons: [hardFailureReason(observation)],
      contentLength,
    };
  }

  const anchoredLength = usualLength(input.anchoredLength ?? null, input.peerLength ?? null);
  const ctx: ScoringContext = { expect, observation, baseline, anchoredLength, content, contentLength };
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
  // What a relay can fake: judged only with the references the shell passes in.
  const fingerprint = input.fingerprint && expect.fingerprint ? judgeFingerprint({ ...input.fingerprint, expect, content }) : undefined;
  const usage = input.usage ? judgeUsage({ ...input.usage, answerChars: contentLength }) : undefined;
  const checks = [
    ...(parts.length.checks ?? []),
    ...(parts.fields.checks ?? []),
    ...(parts.freshness.checks ?? []),
    ...(fingerprint ? [fingerprint.check] : []),
    ...(usage?.check ? [usage.check] : []),
  ];
  const failed = failedCheckNames(checks);
  const weighted = scoreFromComponents(components, input.weights ?? DEFAULT_WEIGHTS);
  const score = failed.length > 0 ? Math.min(weighted, FAILED_CHECK_SCORE) : weighted;
  return {
    components,
    score,
    passed: score >= PASS_SCORE && failed.length === 0,
    hardFailure: false,
    checks,
    reasons: [
      ...(failed.length > 0 ? [`failed check: ${failed.join(", ")}`] : []),
      ...parts.status.reasons,
      ...parts.length.reasons,
      ...parts.fields.reasons,
      ...parts.freshness.reasons,
      ...parts.latency.reasons,
      ...(fingerprint?.check.verdict === "fail" ? [`fingerprint: ${fingerprint.check.detail}`] : []),
      ...(usage?.check?.verdict === "fail" ? [`usage: ${usage.check.detail}`] : []),
    ],
    contentLength,
    ...(fingerprint ? { fingerprint } : {}),
    ...(usage ? { usage } : {}),
  };
}

/** Of a peer's usual length, the least a line's anchor is held to: a line cannot learn to be short. */
export const PEER_LENGTH_SHARE = 0.6;

/** The length the anchored check holds an answer to: the line's anchor, and at least a share of its peers'. */
function usualLength(anchor: number | null, peer: number | null): number | null {
  const own = positiveOrNull(anchor);
  const peers = positiveOrNull(peer);
  if (peers === null) return own;
  return Math.max(own ?? 0, PEER_LENGTH_SHARE * peers);
}
