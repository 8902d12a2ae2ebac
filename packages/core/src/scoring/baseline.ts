// A line's own recent behaviour for one sample: what "usual" means for length and latency.
import { median, quantile } from "simple-statistics";

/** How many recent probes of a (line, sample) the baseline looks at. */
export const BASELINE_WINDOW = 20;
/** Probes behind a baseline statistic before it counts fully; below that it is blended in. */
export const BASELINE_WARMUP = 5;
/** The same content hash this many probes in a row (this one included) is a stale cache. */
export const STALE_RUN = 3;
/** Content hashes kept in a baseline, newest first. */
export const RECENT_HASHES = 5;

/** What the baseline needs of a past probe result; a ProbeResult fits. */
export interface BaselineEntry {
  contentLength: number;
  latencyMs: number;
  passed: boolean;
  contentHash: string | null;
  hardFailure: boolean;
}

export interface Baseline {
  /** Median content length of the passing probes in the window. */
  lengthMedian: number | null;
  /** Latency quantiles of the probes in the window that got an answer (no hard failure). */
  latencyP50: number | null;
  latencyP90: number | null;
  /** Probes in the window. */
  samples: number;
  /** Probes behind `lengthMedian`; defaults to `samples` when a baseline is built by hand. */
  lengthSamples?: number;
  /** Probes behind the latency quantiles; defaults to `samples`. */
  latencySamples?: number;
  /** Content hashes of the latest probes that got an answer, newest first. */
  recentHashes: string[];
}

export const EMPTY_BASELINE: Readonly<Baseline> = Object.freeze({
  lengthMedian: null,
  latencyP50: null,
  latencyP90: null,
  samples: 0,
  lengthSamples: 0,
  latencySamples: 0,
  recentHashes: [],
});

/**
 * `history` is the (line, sample)'s recent results, newest first, without the probe being
 * scored. Only passing probes set the usual length, so a run of truncated answers does not
 * teach the baseline that short is normal.
 */
export function computeBaseline(history: readonly BaselineEntry[]): Baseline {
  const window = history.slice(0, BASELINE_WINDOW);
  const answered = window.filter((h) => !h.hardFailure);
  const lengths = answered.filter((h) => h.passed && Number.isFinite(h.contentLength) && h.contentLength >= 0).map((h) => h.contentLength);
  const latencies = answered.filter((h) => Number.isFinite(h.latencyMs) && h.latencyMs >= 0).map((h) => h.latencyMs);
  const [p50, p90] = latencies.length > 0 ? quantile(latencies, [0.5, 0.9]) : [null, null];
  return {
    lengthMedian: lengths.length > 0 ? median(lengths) : null,
    latencyP50: p50 ?? null,
    latencyP90: p90 ?? null,
    samples: window.length,
    lengthSamples: lengths.length,
    latencySamples: latencies.length,
    recentHashes: answered.flatMap((h) => (h.contentHash === null ? [] : [h.contentHash])).slice(0, RECENT_HASHES),
  };
}

/** How much a baseline statistic backed by `n` probes counts: 0 cold, 1 from BASELINE_WARMUP on. */
export function baselineWeight(n: number | undefined): number {
  if (n === undefined || !Number.isFinite(n) || n <= 0) return 0;
  return Math.min(1, n / BASELINE_WARMUP);
}
