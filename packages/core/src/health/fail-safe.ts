// The health machine's last resort (docs/health.md): what a line becomes when the shell cannot apply its
// failing result. Safe means out of the table, never "as it was": a line that was failing stays out
// until probes bring it back the ordinary way.
import type { AdminState } from "../types";
import type { Health, HealthEffect, HealthState, Transition } from "./health-types";
import type { HealthPolicy } from "./policy";
import { newLineHealth } from "./transition";
import { isAdminPhase, servicePhase, weightFactor } from "./weight-factor";

/**
 * A cooldown of the policy's base length, started at `now`, under the line's admin overlay if it has
 * one. It takes nothing from the record but that overlay and the backoff's history, so it holds when
 * the record or the code that reads it is at fault (`health` null: the record is unusable). The line
 * then leaves cooldown through ticks and probes like any other; a line already in cooldown is left
 * as it is (it carries no weight).
 */
export function failSafeCooldown(
  health: Health | null,
  adminState: AdminState,
  policy: Pick<HealthPolicy, "cooldownBaseMs" | "hardRatePrior" | "probationSteps">,
  now: number,
  cause: { detail: string; probeIds: string[] },
): Transition {
  const base = health ?? newLineHealth(now, adminState, policy);
  if (servicePhase(base).state === "cooldown") return { health: base, effects: [] };
  const cooldown = { state: "cooldown", since: now, until: now + policy.cooldownBaseMs, durationMs: policy.cooldownBaseMs } as const;
  const phase = isAdminPhase(base.phase) ? { state: base.phase.state, resume: cooldown } : cooldown;
  const next: Health = {
    ...base,
    phase,
    since: phase.state === base.phase.state ? base.since : now,
    factor: 0,
    holdUntil: null,
    failStreak: cause.probeIds.slice(-8),
    passStreak: [],
    cooldowns: [...base.cooldowns.slice(-11), now],
    lastCooldownMs: policy.cooldownBaseMs,
    doubledAt: null,
    reprobe: null,
  };
  const why = { reason: "fail_safe" as const, detail: `${cause.detail}: cooldown of the policy's base length`, probeIds: cause.probeIds };
  const effects: HealthEffect[] = [];
  const from: HealthState = base.phase.state;
  if (from !== phase.state) effects.push({ kind: "state_change", from, to: phase.state, ...why });
  const [before, after] = [weightFactor(base), weightFactor(next)];
  if (before !== after) effects.push({ kind: "weight_change", from: before, to: after, ...why });
  return { health: next, effects };
}
