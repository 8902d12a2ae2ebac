// Evidence of failure, weighed against how often the line usually fails (docs/health.md). Each statistic is
// a one-sided CUSUM (Page's test) of the log-likelihood ratio "failing" (a failure rate of
// FAILING_RATE) against "as usual" (the line's own rate): a failure adds ln(p1/p0), a pass takes
// ln((1−p0)/(1−p1)) away, and it never goes below 0. Two content failures in a row (at the floor
// rate) cross the content threshold and four hard failures (at a 1% stray rate) the hard one, so a
// line that starts failing every probe is out within two (content) or four (hard) failed probes,
// while a stray 5xx or timeout at the rate the line shows is worth little and is forgotten by the
// next passes. (Three hard failures in a row at 1% happen about 0.008 times a line-day: seen once in
// 30 noisy line-days of bench/detection/judgment.ts.)
import type { Evidence } from "./health-types";
import type { HealthPolicy } from "./policy";

/** The failure rate a failing line shows: the alternative the evidence is for. */
export const FAILING_RATE = 0.95;
/** Probes a usual rate remembers (exponential weights): the hard rate over a line's probes, the content rate over a sample's. */
export const HARD_RATE_PROBES = 1000;
export const CONTENT_RATE_PROBES = 40;
/** Probes of a sample its recent content-failure rate remembers: what grades a partly wrong line. */
export const RECENT_CONTENT_PROBES = 60;

export type ProbeOutcome = "pass" | "content" | "hard";

export const emptyEvidence = (policy: Pick<HealthPolicy, "hardRatePrior">): Evidence => ({
  hard: 0,
  content: 0,
  sampleContent: {},
  hardRate: policy.hardRatePrior,
  contentRate: {},
  contentBase: {},
  recentContent: {},
  checked: {},
  failing: [],
});

const clampRate = (rate: number, floor: number, cap: number): number => Math.min(cap, Math.max(floor, rate));

/** What one failure adds at usual rate `p0`. */
export const failureWeight = (p0: number): number => Math.log(FAILING_RATE / p0);
/** What one pass takes away at usual rate `p0`. */
export const passWeight = (p0: number): number => Math.log((1 - p0) / (1 - FAILING_RATE));

const step = (s: number, failed: boolean, p0: number): number => Math.max(0, s + (failed ? failureWeight(p0) : -passWeight(p0)));

/**
 * The thresholds: `count` failures in a row reach them (with a quarter of a failure's weight to
 * spare, so float dust cannot decide), `count − 1` do not: content failures at the floor rate,
 * hard failures at a new line's usual stray rate (the prior, 1%).
 */
export const contentThreshold = (p: HealthPolicy): number => (p.failCount - 0.25) * failureWeight(p.rateFloor);
export const hardThreshold = (p: HealthPolicy): number => (p.hardFailCount - 0.25) * failureWeight(Math.max(p.rateFloor, p.hardRatePrior));
/** In probation one content failure at the floor rate sends a line back; a sample that often fails needs more. */
export const probationThreshold = (p: HealthPolicy): number => 0.75 * failureWeight(p.rateFloor);

export interface EvidenceInput {
  sampleId: string;
  outcome: ProbeOutcome;
  /** A confirming re-probe: it speaks for its sample, not for the line across samples. */
  confirming: boolean;
  /** The line is in service (healthy or degraded): only then is its hard rate learned. */
  inService: boolean;
}

/** The evidence after one probe. Pure; never mutates `e`. */
export function addEvidence(e: Evidence, x: EvidenceInput, policy: HealthPolicy): Evidence {
  const { sampleId, outcome } = x;
  const floor = policy.rateFloor;
  const hardRate = clampRate(e.hardRate, floor, policy.hardRateCap);
  // Records and lists are replaced, never changed in place: what is not replaced is shared with `e`.
  let failing = e.failing.includes(sampleId) ? e.failing.filter((s) => s !== sampleId) : e.failing;
  if (outcome !== "pass") failing = [...failing, sampleId];
  const next: Evidence = { ...e, failing };
  next.hard = step(e.hard, outcome === "hard", hardRate);
  if (x.inService)
    next.hardRate = clampRate(e.hardRate + ((outcome === "hard" ? 1 : 0) - e.hardRate) / HARD_RATE_PROBES, floor, policy.hardRateCap);
  // A hard failure says nothing about the content: no answer was checked.
  if (outcome === "hard") return next;
  const failed = outcome === "content";
  const learned = clampRate(e.contentRate[sampleId] ?? floor, floor, policy.contentRateCap);
  // Weighed against the rate as it was when the sample's evidence last stood at 0: a run of failures
  // must not teach the rate it is judged by while it runs.
  const usual = clampRate(e.contentBase[sampleId] ?? learned, floor, policy.contentRateCap);
  const sample = step(e.sampleContent[sampleId] ?? 0, failed, usual);
  next.sampleContent = withEntry(e.sampleContent, sampleId, sample);
  if (!x.confirming) next.content = step(e.content, failed, usual);
  const rate = clampRate(learned + ((failed ? 1 : 0) - learned) / CONTENT_RATE_PROBES, floor, policy.contentRateCap);
  next.contentRate = withEntry(e.contentRate, sampleId, rate);
  next.contentBase = withEntry(e.contentBase, sampleId, sample === 0 ? rate : usual);
  const recent = e.recentContent[sampleId] ?? 0;
  next.recentContent = withEntry(e.recentContent, sampleId, recent + ((failed ? 1 : 0) - recent) / RECENT_CONTENT_PROBES);
  next.checked = withEntry(e.checked, sampleId, Math.min(RECENT_CONTENT_PROBES, (e.checked[sampleId] ?? 0) + 1));
  return next;
}

/**
 * `{ ...record, [key]: value }`, or the record itself when it already holds that value: a line
 * that keeps passing settles at fixed points (a rate at its floor, a statistic at 0, a count at its
 * cap), and the same record is then shared instead of copied (records are never changed in place).
 */
export function withEntry(record: Record<string, number>, key: string, value: number): Record<string, number> {
  return Object.hasOwn(record, key) && Object.is(record[key], value) ? record : { ...record, [key]: value };
}

/**
 * A sample failing its content checks at `failingShare` of its recent probes or more (with enough of
 * them behind the rate): the line is failing, whatever it has got used to. The evidence above detects
 * a change; this holds a line whose failures have become its habit.
 */
export function failingShare(e: Evidence, policy: Pick<HealthPolicy, "failingShare">): { sampleId: string; rate: number } | null {
  let worst: { sampleId: string; rate: number } | null = null;
  for (const sampleId in e.recentContent) {
    const rate = e.recentContent[sampleId] as number;
    if ((e.checked[sampleId] ?? 0) < MIN_CHECKED || rate < policy.failingShare) continue;
    if (!worst || rate > worst.rate) worst = { sampleId, rate };
  }
  return worst;
}

/** Checked probes of a sample before its recent rate can call the line failing. */
export const MIN_CHECKED = 10;

/** The evidence after a cooldown ends or begins: the statistics start over, the learned rates stay. */
export const resetEvidence = (e: Evidence): Evidence => ({ ...e, hard: 0, content: 0, sampleContent: {} });

/** The largest per-sample content statistic, and its sample. */
export function worstSample(e: Evidence): { sampleId: string; value: number } | null {
  let worst: { sampleId: string; value: number } | null = null;
  for (const sampleId in e.sampleContent) {
    const value = e.sampleContent[sampleId] as number;
    if (!worst || value > worst.value) worst = { sampleId, value };
  }
  return worst;
}

/** The highest recent content-failure rate over the line's samples that have enough probes behind it. */
export function recentWrongRate(e: Evidence): number {
  let worst = 0;
  for (const sampleId in e.recentContent)
    if ((e.checked[sampleId] ?? 0) >= MIN_CHECKED) worst = Math.max(worst, e.recentContent[sampleId] as number);
  return worst;
}
