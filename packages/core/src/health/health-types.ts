// The per-line health record (docs/health.md): plain JSON, persisted by the shell, restart-safe.
import type { FingerprintReference } from "../fingerprint/judge";
import type { FingerprintStep, FingerprintTrack } from "../fingerprint/track";
import type { ShapeTrack } from "../shape/shape";
import type { AdminState, ProbeResult } from "../types";
import type { UsageStep, UsageTrack } from "../usage/usage";

export const HEALTH_STATES = ["healthy", "degraded", "cooldown", "probation", "unprobed", "drained", "disabled"] as const;
export type HealthState = (typeof HEALTH_STATES)[number];

/** The phases the probes drive; an admin overlay (drained/disabled) keeps one underneath. */
export type ServicePhase =
  | { state: "healthy" }
  | { state: "degraded" }
  | {
      state: "cooldown";
      since: number;
      /** The line may enter probation at this time (or earlier, after `passCount` passes). */
      until: number;
      durationMs: number;
    }
  | {
      state: "probation";
      /** Index into `policy.probationSteps`. */
      stage: number;
      stageSince: number;
      stagePasses: number;
      /**
       * A new line earning its weight (docs/health.md#new-lines): the samples it has passed so far; it
       * is in service once each of its samples has passed once. Absent: probation after a cooldown.
       */
      newLine?: { passed: string[] };
    }
  /**
   * A line no probe has judged yet (new, or no sample applies to it): it carries the probation share
   * and its routes warn (docs/health.md#new-lines). Its first probe result starts its probation.
   */
  | { state: "unprobed" };

export type AdminPhase = { state: "drained" | "disabled"; resume: ServicePhase };

export type Phase = ServicePhase | AdminPhase;

/** A point of the trend window: candidates for the window's peak line score. */
export interface TrendPoint {
  at: number;
  score: number;
  probeId: string;
}

/**
 * The evidence a line's probes have given (docs/health.md): one-sided CUSUM statistics (log-likelihood
 * ratios of "failing" against the line's usual failure rate, never below 0), hard failures and
 * content failures counted apart, and the rates they are weighed against. Persisted with health.
 */
export interface Evidence {
  /** Hard failures (timeouts, connect errors, non-2xx) of the line, against `hardRate`. */
  hard: number;
  /** Content failures of the line's scheduled probes across its samples: a fault every sample sees. */
  content: number;
  /** Per sample: its content failures (confirming probes included), against its own usual rate. */
  sampleContent: Record<string, number>;
  /** The line's usual hard-failure rate, learned while it is in service. */
  hardRate: number;
  /** Per sample: its usual content-failure rate (slow), learned in every state. */
  contentRate: Record<string, number>;
  /** Per sample: the usual rate its evidence is weighed against (`contentRate` as of when that evidence last stood at 0). */
  contentBase: Record<string, number>;
  /** Per sample: its recent content-failure rate (fast): what grades the weight of a line that is partly wrong. */
  recentContent: Record<string, number>;
  /** Per sample: content-checked probes behind `recentContent` (counted up to its window). */
  checked: Record<string, number>;
  /** Samples whose latest probe failed (hard or content). */
  failing: string[];
}

/** A line's usual answer length for one sample, in log(chars): an anchor and a recent mean. */
export interface LengthTrack {
  /** Learned only while the line is healthy at full weight, slowly: a slow degradation cannot drag it. */
  anchor: number | null;
  anchorN: number;
  /** Fast: where the answers are now. */
  recent: number | null;
}

export interface Health {
  phase: Phase;
  /** When the current (public) state was entered. */
  since: number;
  /** Weight factor from the probes, anti-flap hold applied, 0–1. Admin overlays give 0 on top (see weightFactor). */
  factor: number;
  /** The factor is not raised before this time (set when it went down). */
  holdUntil: number | null;
  /** Last line score the caller gave (mean of the last 10 min), 0–100. */
  lineScore: number | null;
  /** Ids of the line's latest failed probes since its last scheduled pass, newest last (at most 8 kept). */
  failStreak: string[];
  /** Ids of the line's consecutive passed probes, newest last (as many as an early release needs). */
  passStreak: string[];
  evidence: Evidence;
  /** Per sample: the usual answer length the anchored length check holds answers to. */
  lengths: Record<string, LengthTrack>;
  /** When the cooldowns of the last hour began: each return within an hour makes the next release harder. */
  cooldowns: number[];
  /** Length of the last cooldown since the line was last fully back in service; null: next one is the first. */
  lastCooldownMs: number | null;
  /** When the running cooldown was last doubled by a failure (at most once per probe interval). */
  doubledAt: number | null;
  trend: TrendPoint[];
  /** A trend alert halves the probe interval until this time. */
  fastProbeUntil: number | null;
  /** A confirming probe the shell owes this line. */
  reprobe: { at: number; sampleId: string; probeId: string } | null;
  /** Since when live traffic has said the line is failing (consecutive suspect judgments); null: it does not. */
  liveSuspectSince: number | null;
  /** Per fingerprint sample: its anchored answers per phrasing and its two statistics (docs/scoring.md#what-a-relay-can-fake). */
  fingerprints: Record<string, FingerprintTrack>;
  /** Per sample: the prompt tokens (per phrasing) and completion tokens per character the line reports. */
  usage: Record<string, UsageTrack>;
  /** The protocol shape of the line's answers; null before its first. */
  shape: ShapeTrack | null;
}

/** What the health machine needs of a probe result. */
export type HealthProbe = Pick<ProbeResult, "id" | "sampleId" | "score" | "passed" | "hardFailure" | "startedAt"> &
  Partial<Pick<ProbeResult, "contentLength">> & {
    /** The scorer's fingerprint judgment's `step` (a fingerprint sample's answer); absent: none. */
    fingerprint?: FingerprintStep | null;
    /** The scorer's usage judgment's `step`; absent: the answer reported no usage, or it was not judged. */
    usage?: UsageStep | null;
    /** shapeSignature() of the answer; absent: no answer (a hard failure) or not read. */
    shape?: string | null;
    /**
     * The usage check's verdict: its detail when it failed, null when it passed; absent when it was
     * not judged (nothing claimed, or nothing to hold the claim to yet).
     */
    usageFailure?: string | null;
  };

export type HealthEvent =
  /**
   * `lineScore`: the mean of the line's last 10 min of probe scores, this probe included.
   * `intervalMs`: the line's probe interval (a cooldown is doubled at most once per interval).
   */
  | {
      type: "probe";
      result: HealthProbe;
      lineScore: number;
      intervalMs?: number;
      /** The ids of the samples that apply to the line: a new line is in service once each has passed (absent: the probe's own). */
      sampleIds?: readonly string[];
    }
  /** Time passes: cooldown end, probation steps, hold expiry. */
  | { type: "tick" }
  | { type: "admin"; adminState: AdminState }
  /**
   * A judgment of the line's live traffic (docs/live-evidence.md): `suspect` when it shows a fault; `reason` names
   * the counts, window and routers; `probeIds` the golden probes sent to confirm it (their results
   * arrive as probe events of their own).
   */
  | { type: "live"; suspect: boolean; reason: string; probeIds: string[] };

export const HEALTH_REASONS = [
  "failure_evidence",
  "live_evidence",
  "consecutive_failures",
  "cooldown_elapsed",
  "consecutive_passes",
  "probation_step",
  "probation_complete",
  "probation_failure",
  /** A new line's first probe result: it earns its weight through probation (docs/health.md#new-lines). */
  "first_probe",
  "line_score",
  "hold_expired",
  "admin",
  "score_drop",
  /** The shell could not apply a failing result: the line went to cooldown as a last resort (fail-safe.ts). */
  "fail_safe",
] as const;
export type HealthReason = (typeof HEALTH_REASONS)[number];

export type HealthEffect =
  | { kind: "state_change"; from: HealthState; to: HealthState; reason: HealthReason; detail: string; probeIds: string[] }
  /** `from`/`to` are weight factors (0–1), as weightFactor gives them. */
  | { kind: "weight_change"; from: number; to: number; reason: HealthReason; detail: string; probeIds: string[] }
  | {
      kind: "trend_alert";
      reason: "score_drop";
      /** Peak line score within the window, and the line score now. */
      from: number;
      to: number;
      windowMs: number;
      detail: string;
      probeIds: string[];
    }
  /** Probe `sampleId` again at `at` to confirm a first failure. */
  | { kind: "reprobe"; at: number; sampleId: string; probeIds: string[] }
  /** Probe at the fast interval (probeIntervalMs with fast: true) until `until`. */
  | { kind: "fast_probe_until"; until: number; probeIds: string[] }
  /**
   * A fingerprint sample's statistic reached its threshold (`moved`: true; its answers fail the check
   * from now on) or fell back below it (false). `detail` says which anchor, its answers and the latest.
   */
  | {
      kind: "fingerprint";
      sampleId: string;
      moved: boolean;
      references: FingerprintReference[];
      detail: string;
      /** The phrasing's anchored answers (share of each) and the latest answers to it (count of each). */
      anchor: Array<{ answer: string; share: number }>;
      now: Array<{ answer: string; count: number }>;
      probeIds: string[];
    }
  /** The answers' protocol shape changed (shape.ts): shown, and the line is probed fast (a fast_probe_until follows). */
  | { kind: "shape_change"; from: string; to: string; detail: string; probeIds: string[] }
  /**
   * A sample's usage check started failing (`failing`: true; `detail` names the tokens claimed and
   * expected) or passed again (false). The failure itself is a content failure of the probe.
   */
  | { kind: "usage"; sampleId: string; failing: boolean; detail: string; probeIds: string[] };

export interface Transition {
  health: Health;
  effects: HealthEffect[];
}
