// Builders for scoring tests: an observation of a good 200 answer, and baselines.
import {
  type Baseline,
  type BaselineEntry,
  computeBaseline,
  EMPTY_BASELINE,
  type ProbeObservation,
  type SampleExpect,
  type ScoredProbe,
  scoreProbe,
} from "@linewatch/core";

export const NONCE = "lw-4f9c2a7b1d";

export function observe(content: string | null, over: Partial<ProbeObservation> = {}): ProbeObservation {
  return {
    status: 200,
    errorClass: null,
    latencyMs: 1200,
    content,
    json: { usage: { total_tokens: 120 } },
    contentHash: content === null ? null : `hash:${content}`,
    nonce: NONCE,
    ...over,
  };
}

/** `n` passing results of about `length` chars and `latencyMs`, with distinct hashes. */
export function history(n: number, length: number, latencyMs: number): BaselineEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    contentLength: length + ((i % 5) - 2) * Math.round(length * 0.05),
    latencyMs: latencyMs + ((i % 7) - 3) * Math.round(latencyMs * 0.05),
    passed: true,
    contentHash: `h${i}`,
    hardFailure: false,
  }));
}

export function warm(length: number, latencyMs: number, n = 20): Baseline {
  return computeBaseline(history(n, length, latencyMs));
}

export const cold: Baseline = EMPTY_BASELINE;

export function score(expect: SampleExpect, observation: ProbeObservation, baseline: Baseline = cold): ScoredProbe {
  return scoreProbe({ expect, observation, baseline });
}
