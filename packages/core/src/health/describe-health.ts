// A flat view of a health record for GET /v1/lines/:id/health and the dashboard.
import type { FingerprintReference } from "../fingerprint/judge";
import { failingReferences, tallyAnswers } from "../fingerprint/track";
import { usualShape } from "../shape/shape";
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
  /** The evidence against the line and the thresholds it is held to (docs/health.md). */
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
  /**
   * Per fingerprint sample (docs/scoring.md#what-a-relay-can-fake): its statistics against the line's
   * own anchors and its paid peers', the threshold, which are failing, and per phrasing the anchored
   * answers (share of each) and the latest (count of each).
   */
  fingerprints: Record<
    string,
    {
      own: number;
      peers: number;
      threshold: number;
      failing: FingerprintReference[];
      variants: Record<
        string,
        { anchor: Array<{ answer: string; share: number }>; answers: number; latest: Array<{ answer: string; count: number }> }
      >;
    }
  >;
  /**
   * Per sample: the anchored prompt tokens per phrasing and completion tokens per character (null while
   * learned), and the latest judged usage check's failure (null: it passed).
   */
  usage: Record<string, { promptTokens: Record<string, number | null>; tokensPerChar: number | null; failing: string | null }>;
  /** The answers' usual protocol shape and the latest change; null before the first answer. */
  shape: { usual: string | null; answers: number; changedAt: number | null; changedTo: string | null } | null;
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
    fingerprints: mapValues(h.fingerprints, (t) => ({
      own: round2(t.own),
      peers: round2(t.peers),
      threshold: round2(t.threshold),
      failing: failingReferences(t),
      variants: mapValues(t.variants, (v) => ({
        anchor: Object.entries(v.anchor.shares)
          .sort((a, b) => b[1] - a[1])
          .map(([answer, share]) => ({ answer, share: round4(share) })),
        answers: v.anchor.n,
        latest: tallyAnswers(v.recent),
      })),
    })),
    usage: mapValues(h.usage, (u) => ({
      promptTokens: mapValues(u.prompt, (a) => (a.anchor === null ? null : Math.round(a.anchor * 10) / 10)),
      tokensPerChar: u.ratio.anchor === null ? null : round4(u.ratio.anchor),
      failing: u.failing ?? null,
    })),
    shape:
      h.shape === null
        ? null
        : { usual: usualShape(h.shape), answers: h.shape.n, changedAt: h.shape.changedAt, changedTo: h.shape.changedTo },
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
