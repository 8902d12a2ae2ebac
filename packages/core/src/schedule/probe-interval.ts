// docs/tables.md probe frequency: the configured interval, stretched to keep probes within the budget.

export interface ProbeBudget {
  probeIntervalSec: number;
  /** Requests/day the upstream allows; null: no quota, no budget floor. */
  dailyQuota: number | null;
  /** Share of `dailyQuota` (percent) probes may spend. */
  probeBudgetPct: number;
}

const DAY_MS = 86_400_000;

/**
 * Shortest cycle that keeps `samplesPerCycle` probes per cycle within the budget; 0 without a quota,
 * Infinity when the budget allows no probe at all.
 */
export function budgetFloorMs(line: ProbeBudget, samplesPerCycle: number): number {
  if (line.dailyQuota === null || samplesPerCycle <= 0) return 0;
  const probesPerDay = (line.dailyQuota * line.probeBudgetPct) / 100;
  if (!(probesPerDay > 0)) return Number.POSITIVE_INFINITY;
  return Math.ceil((DAY_MS * samplesPerCycle) / probesPerDay);
}

/**
 * Time between two cycles of a line (each cycle probes every sample once):
 * max(probeIntervalSec, budget floor). `fast` (after a trend alert) halves the interval, never below the floor.
 */
export function probeIntervalMs(line: ProbeBudget, samplesPerCycle: number, opts: { fast?: boolean } = {}): number {
  const configured = line.probeIntervalSec * 1000;
  const wanted = opts.fast ? Math.ceil(configured / 2) : configured;
  return Math.max(wanted, budgetFloorMs(line, samplesPerCycle));
}

/** Probes a line may send per day at this interval (for budget checks and the dashboard). */
export const probesPerDay = (intervalMs: number, samplesPerCycle: number): number =>
  Number.isFinite(intervalMs) && intervalMs > 0 ? (DAY_MS / intervalMs) * samplesPerCycle : 0;
