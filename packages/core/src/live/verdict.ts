// Does live traffic suggest a fault? Two signals, each needing enough volume to mean something:
// 2xx answers that are failures (empty, masked error, cut) above a few percent, or a sharp rise
// of the failure rate over the line's own passive baseline. A line's ordinary rate of stray
// 5xx and timeouts is its baseline, so it never trips the second signal.
import type { LiveOutcome } from "./outcomes";
import type { LiveStats, LiveSummary } from "./summary";

export interface LiveVerdictPolicy {
  /** Answers the recent window needs before it says anything. */
  minRequests: number;
  /** Silent failures (empty, masked_error, cut) at or above this share are suspect. */
  silentRate: number;
  /** Answers the baseline needs to be trusted; below it `floorRate` stands in for it. */
  minBaselineRequests: number;
  /** The failure rate must be at least `riseFactor` × the baseline rate… */
  riseFactor: number;
  /** …and at least this much above it (absolute share). */
  riseMargin: number;
  /** Assumed baseline of a line without enough history. */
  floorRate: number;
}

export const DEFAULT_LIVE_VERDICT: LiveVerdictPolicy = {
  minRequests: 20,
  silentRate: 0.05,
  minBaselineRequests: 100,
  riseFactor: 3,
  riseMargin: 0.15,
  floorRate: 0.05,
};

export type LiveVerdict = { suspect: false; reason: string } | { suspect: true; signal: "silent" | "rise"; reason: string };

const pct = (x: number) => `${(Math.round(x * 1000) / 10).toString()}%`;
const secs = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`);

function countsText(s: LiveStats, outcomes: readonly LiveOutcome[]): string {
  return outcomes
    .filter((o) => s.counts[o] > 0)
    .map((o) => `${s.counts[o]} ${o}`)
    .join(", ");
}

function routersText(s: LiveStats): string {
  return s.routers.length === 0 ? "no router" : `router${s.routers.length === 1 ? "" : "s"} ${s.routers.join(", ")}`;
}

export function liveVerdict(summary: LiveSummary, policy: LiveVerdictPolicy = DEFAULT_LIVE_VERDICT): LiveVerdict {
  const { recent, baseline } = summary;
  const span = `over ${secs(recent.to - 1 - recent.from)} from ${routersText(recent)}`;
  if (recent.requests < policy.minRequests) {
    return { suspect: false, reason: `${recent.requests} live answers ${span}: fewer than ${policy.minRequests}, no verdict` };
  }
  const base = baseline.requests >= policy.minBaselineRequests ? baseline.failureRate : Math.max(baseline.failureRate, policy.floorRate);
  const baseText = `baseline ${pct(baseline.failureRate)} of ${baseline.requests} over the ${secs(baseline.to - baseline.from)} before`;
  if (recent.silentRate >= policy.silentRate) {
    return {
      suspect: true,
      signal: "silent",
      reason: `live traffic: ${countsText(recent, ["empty", "masked_error", "cut"])} of ${recent.requests} answers (${pct(recent.silentRate)}) were 2xx failures ${span}; ${baseText}`,
    };
  }
  if (recent.failureRate >= base * policy.riseFactor && recent.failureRate >= base + policy.riseMargin) {
    return {
      suspect: true,
      signal: "rise",
      reason: `live traffic: failures rose to ${pct(recent.failureRate)} (${countsText(recent, ["http_5xx", "rate_limited", "timeout", "connect"])} of ${recent.requests}) ${span}; ${baseText}`,
    };
  }
  return { suspect: false, reason: `live traffic: ${pct(recent.failureRate)} failures of ${recent.requests} answers ${span}; ${baseText}` };
}

/** What the control plane hands the health machine for a line after a live report (the fusion seam). */
export interface LiveEvidence {
  lineId: string;
  /** ms */
  at: number;
  summary: LiveSummary;
  verdict: LiveVerdict;
  /** The confirming probes sent because the verdict was suspect (empty otherwise). */
  probes: { id: string; sampleId: string; passed: boolean; score: number; hardFailure: boolean }[];
}
