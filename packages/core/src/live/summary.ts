// A line's recent live windows → a passive-evidence summary: counts pooled over a time window
// (so each window weighs by its volume), the failure and success rates, and the line's own
// baseline rate over the longer period before it.
import { addCounts, emptyCounts, FAILURE_OUTCOMES, type OutcomeCounts, SILENT_OUTCOMES, totalOf } from "./outcomes";

/** One stored report window of one line from one router. */
export interface LiveWindow {
  routerId: string;
  /** ms */
  start: number;
  end: number;
  counts: OutcomeCounts;
  promptTokens: number;
  completionTokens: number;
  /** First attempts the router sent elsewhere because it had ejected the line (not answers). */
  heldBack: number;
}

export interface LiveStats {
  /** ms: the windows that ended in [from, to). */
  from: number;
  to: number;
  requests: number;
  counts: OutcomeCounts;
  /** Share of answers that failed for the line's sake (FAILURE_OUTCOMES; 4xx excluded); 0 with no requests. */
  failureRate: number;
  /** Share of answers that were 2xx but failures: empty, masked error, cut. */
  silentRate: number;
  /** Share of answers that were `ok` (the effective success rate); null with no requests. */
  successRate: number | null;
  promptTokens: number;
  completionTokens: number;
  /** Requests the routers held back from the line by ejection (docs/router.md#ejection); not in `requests`. */
  heldBack: number;
  /** Routers that reported, sorted. */
  routers: string[];
}

export interface LiveSummary {
  recent: LiveStats;
  /** The line's own passive rate before the recent window. */
  baseline: LiveStats;
}

export interface LiveWindowPolicy {
  /** ms: the recent window the verdict looks at. */
  recentMs: number;
  /** ms: the period before it that makes the baseline. */
  baselineMs: number;
}

export const DEFAULT_LIVE_WINDOWS: LiveWindowPolicy = { recentMs: 120_000, baselineMs: 3_600_000 };

function rateOf(counts: OutcomeCounts, outcomes: readonly (keyof OutcomeCounts)[], total: number): number {
  if (total === 0) return 0;
  let n = 0;
  for (const o of outcomes) n += counts[o];
  return n / total;
}

export function statsOf(windows: readonly LiveWindow[], from: number, to: number): LiveStats {
  const counts = emptyCounts();
  const routers = new Set<string>();
  let promptTokens = 0;
  let completionTokens = 0;
  let heldBack = 0;
  for (const w of windows) {
    if (w.end < from || w.end >= to) continue;
    addCounts(counts, w.counts);
    promptTokens += w.promptTokens;
    completionTokens += w.completionTokens;
    heldBack += w.heldBack;
    routers.add(w.routerId);
  }
  const requests = totalOf(counts);
  return {
    from,
    to,
    requests,
    counts,
    failureRate: rateOf(counts, FAILURE_OUTCOMES, requests),
    silentRate: rateOf(counts, SILENT_OUTCOMES, requests),
    successRate: requests === 0 ? null : counts.ok / requests,
    promptTokens,
    completionTokens,
    heldBack,
    routers: [...routers].sort(),
  };
}

/** `now` is the end of the recent window; windows outside both periods are ignored. */
export function summarizeLive(windows: readonly LiveWindow[], now: number, policy: LiveWindowPolicy = DEFAULT_LIVE_WINDOWS): LiveSummary {
  const split = now - policy.recentMs;
  return {
    recent: statsOf(windows, split, now + 1),
    baseline: statsOf(windows, split - policy.baselineMs, split),
  };
}
