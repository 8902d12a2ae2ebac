// A flat view of a health record for GET /v1/lines/:id/health and the dashboard.
import { contentThreshold, hardThreshold, worstSample } from "./evidence";
import type { Health, HealthState } from "./health-types";
import { anchoredLength } from "./lengths";
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
  /** The evidence against the line and the thresholds it is held to (SPEC §5). */
  evidence: {
    hard: number;
    hardThreshold: number;
    content: number;
    worstSample: { sampleId: string; value: number } | null;
    contentThreshold: number;
    /** The line's usual hard-failure rate, and per sample its usual and recent content-failure rates. */
    hardRate: number;
    contentRate: Record<string, number>;
    recentContent: Record<string, number>;
  };
  /** Per sample: the anchored usual answer length (chars), null while it is being learned, and the recent one. */
  lengths: Record<string, { anchored: number | null; recent: number | null }>;
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
    evidence: {
      hard: round2(h.evidence.hard),
      hardThreshold: round2(hardThreshold(policy)),
      content: round2(h.evidence.content),
      worstSample: worst(h),
      contentThreshold: round2(contentThreshold(policy)),
      hardRate: round4(h.evidence.hardRate),
      contentRate: mapValues(h.evidence.contentRate, round4),
      recentContent: mapValues(h.evidence.recentContent, round4),
    },
    lengths: mapValues(h.lengths, (t) => ({
      anchored: roundOrNull(anchoredLength(t)),
      recent: roundOrNull(t.recent === null ? null : Math.exp(t.recent)),
    })),
    nextTickAt: nextTickAt(h, policy),
  };
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;
const roundOrNull = (x: number | null): number | null => (x === null ? null : Math.round(x));
const worst = (h: Health) => {
  const w = worstSample(h.evidence);
  return w === null ? null : { sampleId: w.sampleId, value: round2(w.value) };
};
function mapValues<T, U>(record: Record<string, T>, f: (x: T) => U): Record<string, U> {
  const out: Record<string, U> = {};
  for (const [k, v] of Object.entries(record)) out[k] = f(v);
  return out;
}
