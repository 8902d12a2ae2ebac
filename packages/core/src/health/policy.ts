// One policy object holds every threshold of docs/health.md and docs/tables.md; routes override parts of it.
import { err, ok, type Result } from "../types";

export interface HealthPolicy {
  /**
   * Content failures in a row (of one sample, or of the line's samples) that send a line whose
   * content rarely fails to cooldown; a line whose sample fails more often needs more (evidence.ts).
   */
  failCount: number;
  /** Hard failures in a row that send a line with the usual stray rate (the 1% prior) to cooldown. */
  hardFailCount: number;
  /** The least usual failure rate evidence is weighed against, and where a new line's hard rate starts. */
  rateFloor: number;
  hardRatePrior: number;
  /** The most of a line's failures that count as usual: a line failing more often is failing. */
  hardRateCap: number;
  contentRateCap: number;
  /** A sample failing its content checks at this share of its recent probes means the line is failing. */
  failingShare: number;
  /** Consecutive passed probes that end a first cooldown early; doubled for each return within an hour. */
  passCount: number;
  /** First cooldown; each later one (or each failure during one) doubles it up to `cooldownMaxMs`. */
  cooldownBaseMs: number;
  cooldownMaxMs: number;
  /** Weight factors of the probation stages, in order; after the last one the line is back in service. */
  probationSteps: number[];
  /** Time a probation stage must last (with at least one pass and no failure) before the next one. */
  probationStepMs: number;
  /** Anti-flap: after a line's factor goes down, it is not raised for this long. */
  holdMs: number;
  /** A line score below this makes a line `degraded`, with a factor graded down to `degradedMinFactor`. */
  degradedBelow: number;
  /** The line score at which the graded factor reaches `degradedMinFactor`. */
  degradedFloor: number;
  degradedMinFactor: number;
  /** Graded factors are floored to multiples of this, so score noise does not republish tables. */
  factorStep: number;
  /** A sample failing its content checks this much more often than usual costs the line this much weight per unit of rate. */
  wrongAnswerWeight: number;
  /** Answers at this share of their anchored usual length grade the line's factor to 0.5 (1 at 0.8 of it and above). */
  shortAnswerHalfAt: number;
  /** A line-score drop of more than this many points within `trendWindowMs` raises a trend alert. */
  trendDropPoints: number;
  trendWindowMs: number;
  /** How long a trend alert halves the line's probe interval. */
  fastProbeMs: number;
  /**
   * Live traffic that keeps saying the line is failing for this long (two router reports in a row)
   * takes it out, even while its golden probes pass; its confirming probes that fail do at once.
   */
  liveConfirmMs: number;
  /** A confirming probe of the same sample this long after a first failure; null: none. */
  reprobeDelayMs: number | null;
  /** Free lines of a route together get at most this share (docs/tables.md). */
  freeShareCap: number;
}

const MINUTE = 60_000;

export const DEFAULT_HEALTH_POLICY: Readonly<HealthPolicy> = Object.freeze({
  failCount: 2,
  hardFailCount: 4,
  rateFloor: 0.005,
  hardRatePrior: 0.01,
  hardRateCap: 0.2,
  contentRateCap: 0.35,
  failingShare: 0.5,
  passCount: 3,
  cooldownBaseMs: 5 * MINUTE,
  cooldownMaxMs: 60 * MINUTE,
  probationSteps: [0.2, 0.5],
  probationStepMs: 10 * MINUTE,
  holdMs: 3 * MINUTE,
  degradedBelow: 80,
  degradedFloor: 50,
  degradedMinFactor: 0.1,
  factorStep: 0.1,
  wrongAnswerWeight: 2,
  shortAnswerHalfAt: 0.65,
  trendDropPoints: 20,
  trendWindowMs: 10 * MINUTE,
  fastProbeMs: 15 * MINUTE,
  liveConfirmMs: 5_000,
  reprobeDelayMs: 5_000,
  freeShareCap: 0.2,
});

/** Defaults, then each override in order (e.g. a route's); the result is checked. */
export function resolveHealthPolicy(...overrides: Array<Partial<HealthPolicy> | null | undefined>): Result<HealthPolicy, string[]> {
  const policy: HealthPolicy = { ...DEFAULT_HEALTH_POLICY, probationSteps: [...DEFAULT_HEALTH_POLICY.probationSteps] };
  for (const o of overrides) {
    if (!o) continue;
    for (const [key, value] of Object.entries(o)) {
      if (value === undefined) continue;
      (policy as unknown as Record<string, unknown>)[key] = Array.isArray(value) ? [...value] : value;
    }
  }
  const problems = checkHealthPolicy(policy);
  return problems.length === 0 ? ok(policy) : err(problems);
}

const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Names every field that is out of range; empty when the policy is usable. Every field has an upper bound. */
export function checkHealthPolicy(p: HealthPolicy): string[] {
  const problems: string[] = [];
  const int = (k: keyof HealthPolicy, min: number, max: number) => {
    const v = p[k];
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) problems.push(`${k}: an integer in [${min}, ${max}]`);
  };
  const num = (k: keyof HealthPolicy, min: number, max: number) => {
    const v = p[k];
    if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) problems.push(`${k}: a number in [${min}, ${max}]`);
  };
  int("failCount", 1, 20);
  int("hardFailCount", 1, 20);
  num("rateFloor", 0.0001, 0.1);
  num("hardRatePrior", 0.0001, 0.5);
  num("hardRateCap", 0.001, 0.5);
  num("contentRateCap", 0.001, 0.5);
  num("failingShare", 0.05, 1);
  if (p.failingShare <= p.contentRateCap) problems.push("failingShare: above contentRateCap");
  if (p.hardRateCap < p.rateFloor) problems.push("hardRateCap: at least rateFloor");
  if (p.contentRateCap < p.rateFloor) problems.push("contentRateCap: at least rateFloor");
  int("passCount", 1, 100);
  num("cooldownBaseMs", 1_000, DAY);
  num("cooldownMaxMs", 1_000, 7 * DAY);
  if (p.cooldownMaxMs < p.cooldownBaseMs) problems.push("cooldownMaxMs: at least cooldownBaseMs");
  if (
    !Array.isArray(p.probationSteps) ||
    p.probationSteps.length > 10 ||
    p.probationSteps.some((s) => typeof s !== "number" || !(s > 0 && s <= 1))
  )
    problems.push("probationSteps: at most 10 factors in (0, 1]");
  num("probationStepMs", 0, DAY);
  num("holdMs", 0, DAY);
  num("degradedBelow", 0, 100);
  num("degradedFloor", 0, 100);
  if (p.degradedFloor >= p.degradedBelow) problems.push("degradedFloor: below degradedBelow");
  num("degradedMinFactor", 0, 1);
  num("factorStep", 0.001, 1);
  num("wrongAnswerWeight", 0, 10);
  num("shortAnswerHalfAt", 0, 0.79);
  num("trendDropPoints", 0, 100);
  num("trendWindowMs", 0, DAY);
  num("fastProbeMs", 0, DAY);
  num("liveConfirmMs", 0, HOUR);
  if (p.reprobeDelayMs !== null) num("reprobeDelayMs", 0, HOUR);
  num("freeShareCap", 0, 1);
  return problems;
}
