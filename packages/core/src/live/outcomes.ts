// How one live answer ended, as a router classifies it in-band (docs/live-evidence.md), and the per-line
// counts routers report to `POST /v1/outcomes`. One list for the router, the API and the metrics.

export const LIVE_OUTCOMES = ["ok", "empty", "masked_error", "cut", "http_4xx", "http_5xx", "rate_limited", "timeout", "connect"] as const;
export type LiveOutcome = (typeof LIVE_OUTCOMES)[number];

export type OutcomeCounts = Record<LiveOutcome, number>;

/** A 200 that is a failure: what golden probes with short prompts can miss. */
export const SILENT_OUTCOMES: readonly LiveOutcome[] = ["empty", "masked_error", "cut"];
/**
 * Outcomes that count against the line. `http_4xx` does not: a 400 or 401 is usually the
 * client's request or key, and routers pass it back unchanged.
 */
export const FAILURE_OUTCOMES: readonly LiveOutcome[] = ["empty", "masked_error", "cut", "http_5xx", "rate_limited", "timeout", "connect"];

export function emptyCounts(): OutcomeCounts {
  return { ok: 0, empty: 0, masked_error: 0, cut: 0, http_4xx: 0, http_5xx: 0, rate_limited: 0, timeout: 0, connect: 0 };
}

export function totalOf(counts: OutcomeCounts): number {
  let n = 0;
  for (const o of LIVE_OUTCOMES) n += counts[o];
  return n;
}

export function addCounts(into: OutcomeCounts, from: OutcomeCounts): OutcomeCounts {
  for (const o of LIVE_OUTCOMES) into[o] += from[o];
  return into;
}

/** One line's share of a router's report window (the body of `POST /v1/outcomes` holds a list). */
export interface OutcomeReportLine {
  lineId: string;
  counts: OutcomeCounts;
  /** `usage` tokens of the answers that carried them. */
  promptTokens: number;
  completionTokens: number;
  /** Sums over the answers with a status (divide by their count for a mean). */
  latencyMsSum: number;
  ttfbMsSum: number;
  /**
   * First attempts the table gave the line that the router sent elsewhere because it had ejected the
   * line (docs/router.md#ejection): not answers, but what the router's own protection kept from it.
   * Absent from a router that predates it: 0.
   */
  heldBack?: number;
}

/** What a router pushes every few seconds; `(routerId, windowId)` makes a push idempotent. */
export interface OutcomeReport {
  routerId: string;
  windowId: string;
  /** ISO times. */
  windowStart: string;
  windowEnd: string;
  lines: OutcomeReportLine[];
}
