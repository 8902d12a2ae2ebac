// Weight factors (0–1) of a line's health: what the table math multiplies base weights by.
import { recentWrongRate } from "./evidence";
import type { AdminPhase, Health, Phase, ServicePhase } from "./health-types";
import { lengthRatio } from "./lengths";
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
  return stepped((lineScore - policy.degradedFloor) / (policy.degradedBelow - policy.degradedFloor), policy);
}

/** A wrong-answer rate this low is noise: a stray content failure never costs weight. */
export const WRONG_RATE_FREE = 0.05;
/** Answers at this share of their anchored length or above are normal variation. */
export const LENGTH_RATIO_FREE = 0.8;

/** A line partly wrong: 1 − wrongAnswerWeight × (the worst sample's recent content-failure rate − the free 5%). */
export function wrongAnswerFactor(h: Health, policy: HealthPolicy): number {
  const excess = recentWrongRate(h.evidence) - WRONG_RATE_FREE;
  return excess <= 0 ? 1 : stepped(1 - policy.wrongAnswerWeight * excess, policy);
}

/** A line whose answers grew short against their anchors: 1 at 80% and above, 0.5 at `shortAnswerHalfAt`. */
export function shortAnswerFactor(h: Health, policy: HealthPolicy): number {
  const ratio = lengthRatio(h.lengths);
  if (ratio === null || ratio >= LENGTH_RATIO_FREE) return 1;
  return stepped(1 - (0.5 * (LENGTH_RATIO_FREE - ratio)) / (LENGTH_RATIO_FREE - policy.shortAnswerHalfAt), policy);
}

/** In service: the lowest of what the score, the wrong answers and the answer lengths ask for. */
export function serviceFactor(h: Health, policy: HealthPolicy): number {
  return Math.min(gradedFactor(h.lineScore, policy), wrongAnswerFactor(h, policy), shortAnswerFactor(h, policy));
}

/** Floored to a multiple of `factorStep` (noise does not republish tables), within [degradedMinFactor, 1]. */
function stepped(raw: number, policy: HealthPolicy): number {
  const f = Math.floor(raw / policy.factorStep + 1e-9) * policy.factorStep;
  return roundFactor(Math.min(1, Math.max(policy.degradedMinFactor, f)));
}

/** The factor a phase asks for before the anti-flap hold. */
export function targetFactor(phase: ServicePhase, h: Health, policy: HealthPolicy): number {
  switch (phase.state) {
    case "healthy":
    case "degraded":
      return serviceFactor(h, policy);
    case "cooldown":
      return 0;
    case "probation":
      return roundFactor(policy.probationSteps[phase.stage] ?? 1);
    case "unprobed":
      return unprobedFactor(policy);
  }
}

/** A line no probe has judged: the first probation share (docs/health.md#new-lines), never full weight. */
export const unprobedFactor = (policy: Pick<HealthPolicy, "probationSteps">): number => roundFactor(policy.probationSteps[0] ?? 1);

/** Anti-flap: a factor goes down at once, and up only once the hold is over. */
export function heldFactor(current: number, target: number, holdUntil: number | null, now: number): number {
  if (target <= current) return target;
  return holdUntil === null || now >= holdUntil ? target : current;
}

// Factors are compared for equality (a change is an event); keep them free of float dust.
const roundFactor = (f: number): number => Math.round(f * 1e6) / 1e6;
