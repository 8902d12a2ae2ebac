// A flat view of a health record for GET /v1/lines/:id/health and the dashboard.
import type { Health, HealthState } from "./health-types";
import type { HealthPolicy } from "./policy";
import { nextTickAt } from "./transition";
import { servicePhase, weightFactor } from "./weight-factor";

export interface HealthView {
  state: HealthState;
  /** Under an admin overlay: the state the probes keep, resumed when the line is set active. */
  serviceState: Exclude<HealthState, "drained" | "disabled">;
  weightFactor: number;
  lineScore: number | null;
  since: number;
  cooldownUntil: number | null;
  cooldownMs: number | null;
  probationStage: number | null;
  probationFactor: number | null;
  holdUntil: number | null;
  fastProbeUntil: number | null;
  consecutiveFailures: number;
  consecutivePasses: number;
  nextTickAt: number | null;
}

export function describeHealth(h: Health, policy: HealthPolicy): HealthView {
  const op = servicePhase(h);
  return {
    state: h.phase.state,
    serviceState: op.state,
    weightFactor: weightFactor(h),
    lineScore: h.lineScore,
    since: h.since,
    cooldownUntil: op.state === "cooldown" ? op.until : null,
    cooldownMs: op.state === "cooldown" ? op.durationMs : null,
    probationStage: op.state === "probation" ? op.stage : null,
    probationFactor: op.state === "probation" ? (policy.probationSteps[op.stage] ?? null) : null,
    holdUntil: h.holdUntil,
    fastProbeUntil: h.fastProbeUntil,
    consecutiveFailures: h.failStreak.length,
    consecutivePasses: h.passStreak.length,
    nextTickAt: nextTickAt(h, policy),
  };
}
