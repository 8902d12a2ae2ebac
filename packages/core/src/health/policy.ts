// One policy object holds every threshold of SPEC §5 and §6; routes override parts of it.
import { err, ok, type Result } from "../types";

export interface HealthPolicy {
  /** Consecutive failed probes (of the line, or of one sample) that send a line to cooldown. */
  failCount: number;
  /** Consecutive passed probes that end a cooldown early. */
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
  /** A line-score drop of more than this many points within `trendWindowMs` raises a trend alert. */
  trendDropPoints: number;
  trendWindowMs: number;
  /** How long a trend alert halves the line's probe interval. */
  fastProbeMs: number;
  /** A confirming probe of the same sample this long after a first failure; null: none. */
  reprobeDelayMs: number | null;
  /** Free lines of a route together get at most this share (SPEC §6). */
  freeShareCap: number;
}

const MINUTE = 60_000;

export const DEFAULT_HEALTH_POLICY: Readonly<HealthPolicy> = Object.freeze({
  failCount: 2,
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
  trendDropPoints: 20,
  trendWindowMs: 10 * MINUTE,
  fastProbeMs: 15 * MINUTE,
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

/** Names every field that is out of range; empty when the policy is usable. */
export function checkHealthPolicy(p: HealthPolicy): string[] {
  const problems: string[] = [];
  const int = (k: keyof HealthPolicy, min: number) => {
    const v = p[k];
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) problems.push(`${k}: an integer ≥ ${min}`);
  };
  const num = (k: keyof HealthPolicy, min: number, max = Number.POSITIVE_INFINITY) => {
    const v = p[k];
    if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) problems.push(`${k}: a number in [${min}, ${max}]`);
  };
  int("failCount", 1);
  int("passCount", 1);
  num("cooldownBaseMs", 1);
  num("cooldownMaxMs", 1);
  if (p.cooldownMaxMs < p.cooldownBaseMs) problems.push("cooldownMaxMs: at least cooldownBaseMs");
  if (!Array.isArray(p.probationSteps) || p.probationSteps.some((s) => typeof s !== "number" || !(s > 0 && s <= 1)))
    problems.push("probationSteps: factors in (0, 1]");
  num("probationStepMs", 0);
  num("holdMs", 0);
  num("degradedBelow", 0, 100);
  num("degradedFloor", 0, 100);
  if (p.degradedFloor >= p.degradedBelow) problems.push("degradedFloor: below degradedBelow");
  num("degradedMinFactor", 0, 1);
  num("factorStep", 0.001, 1);
  num("trendDropPoints", 0, 100);
  num("trendWindowMs", 0);
  num("fastProbeMs", 0);
  if (p.reprobeDelayMs !== null) num("reprobeDelayMs", 0);
  num("freeShareCap", 0, 1);
  return problems;
}
