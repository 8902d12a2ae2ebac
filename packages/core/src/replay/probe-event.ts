// The seam between a stored probe result and the health machine: when the health event grows a
// field, only this file changes (the rest of the replay never looks inside a HealthEvent).

import type { FingerprintStep } from "../fingerprint/track";
import type { HealthEvent } from "../health/index";
import { FAILED_CHECK_SCORE } from "../scoring/checks";
import { type ScoreWeights, scoreFromComponents } from "../scoring/weights";
import type { ScoreComponents } from "../types";

/** What the replay reads of a stored probe result (a row of `probe_results`, times in ms). */
export interface ReplayResult {
  id: string;
  lineId: string;
  sampleId: string;
  startedAt: number;
  latencyMs: number;
  score: number;
  passed: boolean;
  hardFailure: boolean;
  /** Needed only to re-score; null when the caller did not read them. */
  components: ScoreComponents | null;
  /** Whether one of its checks failed (stored with the result; a re-scored result keeps it). */
  failedCheck: boolean;
  contentLength: number;
  /**
   * The fingerprint evidence the probe stored (`probe_results.relay.fingerprint`), which the health
   * machine steps as it did live; absent or null: none (not a fingerprint answer, or not read). The
   * relay record's usage and shape are not read: they step tracks that decide nothing here.
   */
  fingerprint?: FingerprintStep | null;
}

/** A proposed scoring: component weights and pass score (docs/scoring.md). Null: the stored verdicts stand. */
export interface ReplayScoring {
  weights: ScoreWeights;
  passScore: number;
}

/**
 * A stored result under a proposed scoring: the score from its stored components, the verdict
 * from that score and the stored checks. Expectations themselves cannot be re-checked: the content
 * is not stored. A hard failure stays one (score 0).
 */
export function rescore(row: ReplayResult, scoring: ReplayScoring | null): ReplayResult {
  if (scoring === null || row.hardFailure || row.components === null) return row;
  const weighted = scoreFromComponents(row.components, scoring.weights);
  const score = row.failedCheck ? Math.min(weighted, FAILED_CHECK_SCORE) : weighted;
  return { ...row, score, passed: score >= scoring.passScore && !row.failedCheck };
}

/**
 * The health event a stored result is to the state machine; `lineScore` as the live path computes it,
 * `intervalMs` the line's probe interval (null: the default the machine assumes).
 */
export function probeEventOf(
  row: ReplayResult,
  lineScore: number,
  intervalMs: number | null = null,
  sampleIds?: readonly string[],
): HealthEvent {
  // As live: a fingerprint answer teaches no length anchor, and its track steps (its verdict is the
  // stored one, already in `passed`).
  const base = {
    id: row.id,
    sampleId: row.sampleId,
    score: row.score,
    passed: row.passed,
    hardFailure: row.hardFailure,
    startedAt: row.startedAt,
    contentLength: row.contentLength,
  };
  const result = row.fingerprint ? { ...base, fingerprint: row.fingerprint } : base;
  // Once per result: literals, not spreads.
  if (sampleIds !== undefined)
    return intervalMs === null
      ? { type: "probe", result, lineScore, sampleIds }
      : { type: "probe", result, lineScore, intervalMs, sampleIds };
  return intervalMs === null ? { type: "probe", result, lineScore } : { type: "probe", result, lineScore, intervalMs };
}
