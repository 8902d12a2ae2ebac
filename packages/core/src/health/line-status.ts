// A line's status, worked out once (docs/health.md, STYLE 11): the admin state over health, the state and
// factor every reader shows, the stored line score, and how to show it. The publisher, the API, the
// metrics and the dashboard read this; none has a formula of its own.
import type { AdminState } from "../types";
import { describeHealth, type HealthView } from "./describe-health";
import type { Health, HealthState } from "./health-types";
import type { HealthPolicy } from "./policy";
import { newLineHealth } from "./transition";

/**
 * How a status is shown: `ok` (healthy, full weight), `degraded` (graded down), `down` (cooldown,
 * weight 0), `recovering` (probation), `unjudged` (unprobed: no probe has judged it), `off` (drained or
 * disabled by an operator). A line at weight 0 is never shown in the colour of a good score.
 */
export const STATUS_TONES = ["ok", "degraded", "down", "recovering", "unjudged", "off"] as const;
export type StatusTone = (typeof STATUS_TONES)[number];

export interface LineStatus extends Omit<HealthView, "state" | "weightFactor"> {
  /** What the line is, as tables and people see it: the registry's admin state wins over health. */
  state: HealthState;
  /** The factor its base weight is multiplied by in every route: 0 when drained or disabled. */
  factor: number;
  /** The stored line score (the mean of the line's last 10 minutes of probe scores, as of its latest probe). */
  score: number | null;
  tone: StatusTone;
}

const TONES: Record<HealthState, StatusTone> = {
  healthy: "ok",
  degraded: "degraded",
  cooldown: "down",
  probation: "recovering",
  unprobed: "unjudged",
  drained: "off",
  disabled: "off",
};

/**
 * The status of a line from its registry admin state and its stored health (null: never probed, so
 * unprobed at the probation share: docs/health.md#new-lines).
 * The registry's admin state wins: health's own admin overlay follows it a moment later, after the
 * admin event is applied, and a reader must not show the line in service meanwhile.
 */
export function lineStatus(adminState: AdminState, health: Health | null, policy: HealthPolicy, now: number): LineStatus {
  const h = health ?? newLineHealth(now, adminState, policy);
  const { state: _shown, weightFactor: _factor, ...view } = describeHealth(h, policy);
  const score = h.lineScore;
  if (adminState !== "active") return { ...view, state: adminState, factor: 0, score, tone: TONES[adminState] };
  // Active in the registry: the phase the probes drive, whatever admin overlay health still carries.
  return { ...view, state: view.serviceState, factor: h.factor, score, tone: TONES[view.serviceState] };
}
