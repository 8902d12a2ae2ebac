// How one upstream attempt ended (docs/live-evidence.md), for the outcome report and the metrics.
import type { LiveOutcome } from "@linewatch/router-client";

export interface AttemptReport {
  outcome: LiveOutcome;
  /** ms from sending to the end of the answer (or the failure). */
  latencyMs: number;
  /** ms from sending to the response headers; null if none came. */
  ttfbMs: number | null;
  promptTokens: number;
  completionTokens: number;
}
