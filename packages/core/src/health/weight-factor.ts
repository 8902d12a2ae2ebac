// Weight factors (0–1) of a line's health: what the table math multiplies base weights by.
import type { AdminPhase, Health, Phase, ServicePhase } from "./health-types";
import type { HealthPolicy } from "./policy";

export const isAdminPhase = (p: Phase): p is AdminPhase => p.state === "drained" || p.state === "disabled";

/** The phase the probes drive, under an admin overlay if there is one. */
export const servicePhase = (h: Health): ServicePhase => (isAdminPhase(h.phase) ? h.phase.resume : h.phase);

/** The factor the table uses: the held health factor, or 0 while drained/disabled. */
export const weightFactor = (h: Health): number => (isAdminPhase(h.phase) ? 0 : h.factor);

/**
 * Whether the line should be probed at the fast interval (probeIntervalMs with fast: true): a trend
 * alert is running and the line still carries traffic or is on its way back. A line in cooldown
 * already has weight 0, so faster probes would only spend budget.
 */
export const isFastProbing = (h: Health, now: number): boolean =>
  h.fastProbeUntil !== null && now < h.fastProbeUntil && servicePhase(h).state !== "cooldown";

/** Degraded grading: 1 at or above `degradedBelow`, down to `degradedMinFactor` at `degradedFloor`, in `factorStep` steps. */
export function gradedFactor(lineScore: number | null, policy: HealthPolicy): number {
  if (lineScore === null || lineScore >= policy.degradedBelow) return 1;
  const raw = (lineScore - policy.degradedFloor) / (policy.degradedBelow - policy.degradedFloor);
  const stepped = Math.floor(raw / policy.factorStep + 1e-9) * policy.factorStep;
  return roundFactor(Math.min(1, Math.max(policy.degradedMinFactor, stepped)));
}

/** The factor a phase asks for before the anti-flap hold. */
export function targetFactor(phase: ServicePhase, lineScore: number | null, policy: HealthPolicy): number {
  switch (phase.state) {
    case "healthy":
    case "degraded":
      return gradedFactor(lineScore, policy);
    case "cooldown":
      return 0;
    case "probation":
      return roundFactor(policy.probationSteps[phase.stage] ?? 1);
  }
}

/** Anti-flap: a factor goes down at once, and up only once the hold is over. */
export function heldFactor(current: number, target: number, holdUntil: number | null, now: number): number {
  if (target <= current) return target;
  return holdUntil === null || now >= holdUntil ? target : current;
}

// Factors are compared for equality (a change is an event); keep them free of float dust.
const roundFactor = (f: number): number => Math.round(f * 1e6) / 1e6;
