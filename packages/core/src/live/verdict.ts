// Does live traffic suggest a fault? Three signals, each needing enough evidence to mean something:
// 2xx answers that are failures (empty, masked error, cut) above a few percent, a sharp rise of the
// failure rate over the line's own passive baseline, or every recent answer failed. A line's ordinary
// rate of stray 5xx and timeouts is its baseline, so it never trips the second signal; the third needs
// few answers because a router's ejection lets a failing line answer only once every few seconds
// (docs/live-evidence.md#judgment).
import { FAILURE_OUTCOMES, type LiveOutcome } from "./outcomes";
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
  /** …and at least this much above it (absolute share)… */
  riseMargin: number;
  /**
   * …and that many failures must be at most this likely for a line failing at the baseline rate
   * (a Chernoff bound on the binomial tail): 20 answers with 5% failing reach 20% by chance too often.
   */
  riseBound: number;
  /** Assumed baseline of a line without enough history. */
  floorRate: number;
  /**
   * Failed answers that make a line suspect when none of its recent answers was `ok` (4xx aside),
   * whatever the volume: k with p^k ≤ `failingBound` for a line that fails at most `failingMaxBaseline`
   * of its answers independently (0.05⁵ ≈ 3.1·10⁻⁷; 0.05⁴ ≈ 6.3·10⁻⁶ would not do).
   */
  failingAnswers: number;
  /** The rule holds only for lines whose baseline (as the rise rule takes it) is at most this. */
  failingMaxBaseline: number;
}

export const DEFAULT_LIVE_VERDICT: LiveVerdictPolicy = {
  minRequests: 20,
  silentRate: 0.05,
  minBaselineRequests: 100,
  riseFactor: 3,
  riseMargin: 0.15,
  riseBound: 1e-6,
  floorRate: 0.05,
  failingAnswers: 5,
  failingMaxBaseline: 0.05,
};

/** The false-alarm bound the `failing` rule is built to: per judgment, for a line failing ≤ 5% of answers. */
export const FAILING_FALSE_ALARM_BOUND = 1e-6;

/**
 * The fewest all-failed answers whose chance for a line failing at most `rate` of its answers,
 * independently, is at most `bound` (per judgment: the answers a window starts with all failed).
 */
export function failingAnswersFor(rate: number, bound: number = FAILING_FALSE_ALARM_BOUND): number {
  if (rate <= 0) return 1;
  return Math.max(1, Math.ceil(Math.log(bound) / Math.log(rate) - 1e-9));
}

/**
 * An upper bound on P(X ≥ k) for X ~ Binomial(n, p): exp(−n·KL(k/n ‖ p)) when k/n > p (Chernoff–Hoeffding),
 * else 1. Never below the exact tail, so a rule that asks for ≤ ε keeps its false alarms ≤ ε.
 */
export function binomialTailBound(k: number, n: number, p: number): number {
  if (n <= 0 || k <= n * p) return 1;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  const q = k / n;
  const kl = q * Math.log(q / p) + (q < 1 ? (1 - q) * Math.log((1 - q) / (1 - p)) : 0);
  return Math.exp(-n * kl);
}

export type LiveSignal = "silent" | "rise" | "failing";
export type LiveVerdict = { suspect: false; reason: string } | { suspect: true; signal: LiveSignal; reason: string };

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

/** "; 37 requests held back by ejection" when the routers held any back (docs/router.md#ejection). */
function heldText(s: LiveStats): string {
  return s.heldBack === 0 ? "" : `; ${s.heldBack} request${s.heldBack === 1 ? "" : "s"} held back by ejection`;
}

function failuresOf(s: LiveStats): number {
  let n = 0;
  for (const o of FAILURE_OUTCOMES) n += s.counts[o];
  return n;
}

/** Every answer failed (no `ok`; 4xx are the client's) and there are enough of them: see `failingAnswers`. */
function allFailed(recent: LiveStats, base: number, policy: LiveVerdictPolicy): number | null {
  if (recent.counts.ok > 0 || base > policy.failingMaxBaseline) return null;
  const failed = failuresOf(recent);
  return failed >= policy.failingAnswers ? failed : null;
}

export function liveVerdict(summary: LiveSummary, policy: LiveVerdictPolicy = DEFAULT_LIVE_VERDICT): LiveVerdict {
  const { recent, baseline } = summary;
  const span = `over ${secs(recent.to - 1 - recent.from)} from ${routersText(recent)}`;
  const held = heldText(recent);
  const base = baseline.requests >= policy.minBaselineRequests ? baseline.failureRate : Math.max(baseline.failureRate, policy.floorRate);
  const baseText = `baseline ${pct(baseline.failureRate)} of ${baseline.requests} over the ${secs(baseline.to - baseline.from)} before`;
  const failed = allFailed(recent, base, policy);
  const failing = (): LiveVerdict => ({
    suspect: true,
    signal: "failing",
    reason: `live traffic: all ${failed} answers failed (${countsText(recent, FAILURE_OUTCOMES)}) ${span}${held}; ${baseText}`,
  });
  if (recent.requests < policy.minRequests) {
    if (failed !== null) return failing();
    return { suspect: false, reason: `${recent.requests} live answers ${span}: fewer than ${policy.minRequests}, no verdict${held}` };
  }
  if (recent.silentRate >= policy.silentRate) {
    return {
      suspect: true,
      signal: "silent",
      reason: `live traffic: ${countsText(recent, ["empty", "masked_error", "cut"])} of ${recent.requests} answers (${pct(recent.silentRate)}) were 2xx failures ${span}${held}; ${baseText}`,
    };
  }
  const failures = failuresOf(recent);
  if (
    recent.failureRate >= base * policy.riseFactor &&
    recent.failureRate >= base + policy.riseMargin &&
    binomialTailBound(failures, recent.requests, base) <= policy.riseBound
  ) {
    return {
      suspect: true,
      signal: "rise",
      reason: `live traffic: failures rose to ${pct(recent.failureRate)} (${countsText(recent, ["http_5xx", "rate_limited", "timeout", "connect"])} of ${recent.requests}) ${span}${held}; ${baseText}`,
    };
  }
  if (failed !== null) return failing();
  return {
    suspect: false,
    reason: `live traffic: ${pct(recent.failureRate)} failures of ${recent.requests} answers ${span}${held}; ${baseText}`,
  };
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
