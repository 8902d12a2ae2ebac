// The sequential test behind a fingerprint verdict (docs/scoring.md#what-a-relay-can-fake): per
// sample, one-sided CUSUM statistics (Page's test) of the per-answer log-likelihood ratio "the
// line left its reference" against "as usual". An answer is a miss when it is outside the
// reference's support (the answers it usually gives); as usual a line misses at p0, the
// reference's miss rate (an upper bound, at least 5%); a line that left it misses at q1 = p0 + 0.3.
// A miss adds ln(q1/p0), a hit takes ln((1−p0)/(1−q1)) away, never below 0.
//
// The false-alarm rate. While p0 is at least the true miss rate, E[exp(LLR)] ≤ 1 for every answer,
// so exp(the sum of the LLRs from any start) is a non-negative supermartingale and, by Ville's
// inequality, it ever reaches exp(h) with probability ≤ exp(−h). The CUSUM crosses h by its n-th
// answer only if one of the n sums started before it does: P(cross within n answers) ≤ n·exp(−h)
// (Lorden 1971; Wald's bound on the average run length, ARL0 ≥ exp(h)). A line has 2 statistics per
// fingerprint sample (its own anchor, its paid peers') and each sees one answer per probe interval,
// so false crossings per line-day ≤ 2 · N · (day / interval) · exp(−h). Solving for a target rate
// gives the threshold below: for N = 10 samples at 45 s and 1 false alarm per 1000 line-days,
// h = ln(2 · 10 · 1920 · 1000) = 17.5. bench/detection/relay.ts checks it by simulation (and at
// lower thresholds, where false crossings are frequent enough to count against exp(−h)).

/** How much more often a line that left its reference misses it: the alternative the test is tuned for. */
export const MISS_SHIFT = 0.3;
/** The designed false-alarm rate: false fingerprint verdicts per 1000 line-days. */
export const FALSE_ALARMS_PER_KILO_LINE_DAY = 1;
/** A statistic stops growing at this multiple of its threshold, so a line that comes back clears in bounded time. */
export const STAT_CAP = 1.5;
/**
 * A recent change of the answers' protocol shape (shape.ts) lowers the threshold by ln(20): the shape
 * alone decides nothing, but it is evidence the backend changed, worth a Bayes factor of 20.
 */
export const SHAPE_BONUS = Math.log(20);
const DAY = 86_400_000;

/** The miss rate of a line that left its reference, for a usual rate `p0`. */
export const alternativeMissRate = (p0: number): number => Math.min(0.95, p0 + MISS_SHIFT);

/** The log-likelihood ratio of one answer: a miss (outside the reference's support) or a hit, at usual rate `p0`. */
export function answerLlr(miss: boolean, p0: number): number {
  const q1 = alternativeMissRate(p0);
  return miss ? Math.log(q1 / p0) : Math.log((1 - q1) / (1 - p0));
}

export interface ThresholdInput {
  /** Fingerprint samples the line is probed with. */
  samples: number;
  /** The line's regular probe interval (each sample is answered once per interval). */
  intervalMs: number;
  /** Default FALSE_ALARMS_PER_KILO_LINE_DAY. */
  falseAlarmsPerKiloLineDay?: number;
}

/** The threshold h for a designed false-alarm rate: 2 · N · (answers per day) · exp(−h) = rate per line-day. */
export function fingerprintThreshold(x: ThresholdInput): number {
  const samples = Math.max(1, Math.floor(x.samples));
  const perDay = DAY / Math.max(1_000, x.intervalMs);
  const rate = (x.falseAlarmsPerKiloLineDay ?? FALSE_ALARMS_PER_KILO_LINE_DAY) / 1000;
  return Math.log((2 * samples * perDay) / Math.max(1e-9, rate));
}

/** The designed false alarms per line-day of a threshold (the inverse of fingerprintThreshold). */
export function falseAlarmsPerLineDay(h: number, samples: number, intervalMs: number): number {
  return 2 * samples * (DAY / intervalMs) * Math.exp(-h);
}

/** A statistic after one answer's LLR: never below 0, never above STAT_CAP × threshold. */
export const stepStatistic = (s: number, llr: number, threshold: number): number => Math.min(STAT_CAP * threshold, Math.max(0, s + llr));
