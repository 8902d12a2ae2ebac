// The SPEC §5 state machine as one pure function: (health, event, policy, now) → (health, effects).
import type { AdminState } from "../types";
import type { Health, HealthEffect, HealthEvent, HealthProbe, HealthReason, ServicePhase, Transition } from "./health-types";
import type { HealthPolicy } from "./policy";
import { stepTrend } from "./trend";
import { heldFactor, isAdminPhase, servicePhase, targetFactor, weightFactor } from "./weight-factor";

/** A new line: healthy at full weight (or under an admin overlay). */
export function initialHealth(now: number, adminState: AdminState = "active"): Health {
  const service: ServicePhase = { state: "healthy" };
  return {
    phase: adminState === "active" ? service : { state: adminState, resume: service },
    since: now,
    factor: 1,
    holdUntil: null,
    lineScore: null,
    failStreak: [],
    passStreak: [],
    sampleFailStreaks: {},
    lastCooldownMs: null,
    trend: [],
    fastProbeUntil: null,
    reprobe: null,
  };
}

interface Cause {
  reason: HealthReason;
  detail: string;
  probeIds: string[];
}

interface Draft {
  h: Health;
  effects: HealthEffect[];
  cause: Cause;
  policy: HealthPolicy;
  now: number;
}

export function transition(health: Health, event: HealthEvent, policy: HealthPolicy, now: number): Transition {
  const d: Draft = {
    h: cloneHealth(health),
    effects: [],
    cause: { reason: "hold_expired", detail: "anti-flap hold over", probeIds: [] },
    policy,
    now,
  };
  if (event.type === "probe") {
    d.cause = {
      reason: "line_score",
      detail: `line score ${round1(event.lineScore)}`,
      probeIds: [event.result.id],
    };
  }
  // Timers first, so a late event (or one after a restart) sees the phase it should.
  advanceTime(d);
  if (event.type === "probe") applyProbe(d, event.result, event.lineScore);
  else if (event.type === "admin") applyAdmin(d, event.adminState);
  settleFactor(d);
  const before = weightFactor(health);
  const after = weightFactor(d.h);
  if (before !== after) {
    d.effects.push({ kind: "weight_change", from: before, to: after, ...d.cause });
  }
  return { health: d.h, effects: d.effects };
}

/** The earliest time a `tick` can change this health; null: only a probe or admin event can. */
export function nextTickAt(h: Health, policy: HealthPolicy): number | null {
  const op = servicePhase(h);
  const times: number[] = [];
  if (op.state === "cooldown") times.push(op.until);
  if (op.state === "probation" && op.stagePasses > 0) times.push(op.stageSince + policy.probationStepMs);
  if (h.holdUntil !== null && targetFactor(op, h.lineScore, policy) > h.factor) times.push(h.holdUntil);
  return times.length === 0 ? null : Math.min(...times);
}

function advanceTime(d: Draft): void {
  const op = servicePhase(d.h);
  if (op.state === "cooldown" && d.now >= op.until) {
    d.h.failStreak = [];
    d.h.passStreak = [];
    d.h.sampleFailStreaks = {};
    setService(
      d,
      { state: "probation", stage: 0, stageSince: d.now, stagePasses: 0 },
      {
        reason: "cooldown_elapsed",
        detail: `cooldown of ${minutes(op.durationMs)} elapsed`,
        probeIds: [],
      },
    );
  } else if (op.state === "probation") {
    stepProbation(d, op);
  }
}

function stepProbation(d: Draft, op: Extract<ServicePhase, { state: "probation" }>): void {
  if (op.stagePasses === 0 || d.now < op.stageSince + d.policy.probationStepMs) return;
  const cause = (reason: HealthReason, detail: string): Cause => ({ reason, detail, probeIds: [...d.h.passStreak] });
  const stage = op.stage + 1;
  // The steps are numbers (validated): undefined means the last step is done.
  const nextFactor = d.policy.probationSteps[stage];
  if (nextFactor !== undefined) {
    setService(
      d,
      { state: "probation", stage, stageSince: d.now, stagePasses: 0 },
      cause("probation_step", `probation passed for ${minutes(d.policy.probationStepMs)}: ${pct(nextFactor)}`),
    );
    return;
  }
  d.h.lastCooldownMs = null;
  // Back in service: healthy at full weight, or degraded while the score (or the hold) keeps it lower.
  const factor = heldFactor(d.h.factor, targetFactor({ state: "healthy" }, d.h.lineScore, d.policy), d.h.holdUntil, d.now);
  setService(d, { state: factor >= 1 ? "healthy" : "degraded" }, cause("probation_complete", "probation complete"));
}

function applyProbe(d: Draft, r: HealthProbe, lineScore: number): void {
  const { policy, now } = d;
  d.h.lineScore = lineScore;
  trackTrend(d, r, lineScore);
  const confirming = d.h.reprobe?.sampleId === r.sampleId;
  if (confirming) d.h.reprobe = null;

  const passed = r.passed && !r.hardFailure;
  if (passed) {
    d.h.passStreak = keepLast([...d.h.passStreak, r.id], policy.passCount);
    // A confirming probe speaks for its sample only: it is extra to the schedule and must never
    // make detection slower than the schedule alone, so its pass leaves the line's streak alone.
    if (!confirming) d.h.failStreak = [];
    delete d.h.sampleFailStreaks[r.sampleId];
  } else {
    d.h.passStreak = [];
    d.h.failStreak = keepLast([...d.h.failStreak, r.id], policy.failCount);
    d.h.sampleFailStreaks[r.sampleId] = keepLast([...(d.h.sampleFailStreaks[r.sampleId] ?? []), r.id], policy.failCount);
  }

  const op = servicePhase(d.h);
  switch (op.state) {
    case "healthy":
    case "degraded": {
      if (passed) return;
      const sampleStreak = d.h.sampleFailStreaks[r.sampleId] ?? [];
      if (d.h.failStreak.length >= policy.failCount) {
        enterCooldown(d, {
          reason: "consecutive_failures",
          detail: `${d.h.failStreak.length} consecutive failed probes`,
          probeIds: [...d.h.failStreak],
        });
      } else if (sampleStreak.length >= policy.failCount) {
        enterCooldown(d, {
          reason: "consecutive_failures",
          detail: `${sampleStreak.length} consecutive failed probes of sample ${r.sampleId}`,
          probeIds: [...sampleStreak],
        });
      } else if (policy.reprobeDelayMs !== null) {
        const at = now + policy.reprobeDelayMs;
        d.h.reprobe = { at, sampleId: r.sampleId, probeId: r.id };
        d.effects.push({ kind: "reprobe", at, sampleId: r.sampleId, probeIds: [r.id] });
      }
      return;
    }
    case "cooldown": {
      if (!passed) {
        // A failure during cooldown doubles it (capped), counted from this failure.
        const durationMs = Math.min(op.durationMs * 2, policy.cooldownMaxMs);
        d.h.lastCooldownMs = durationMs;
        setService(d, { ...op, until: now + durationMs, durationMs }, d.cause);
        return;
      }
      const sampleStillFailing = Object.keys(d.h.sampleFailStreaks).length > 0;
      if (d.h.passStreak.length >= policy.passCount && !sampleStillFailing) {
        setService(
          d,
          { state: "probation", stage: 0, stageSince: now, stagePasses: 0 },
          {
            reason: "consecutive_passes",
            detail: `${d.h.passStreak.length} consecutive passed probes`,
            probeIds: [...d.h.passStreak],
          },
        );
      }
      return;
    }
    case "probation": {
      if (!passed) {
        enterCooldown(d, { reason: "probation_failure", detail: "a probe failed in probation", probeIds: [r.id] });
        return;
      }
      const next = { ...op, stagePasses: op.stagePasses + 1 };
      setService(d, next, d.cause);
      stepProbation(d, next);
      return;
    }
  }
}

function enterCooldown(d: Draft, cause: Cause): void {
  const last = d.h.lastCooldownMs;
  const durationMs = last === null ? d.policy.cooldownBaseMs : Math.min(last * 2, d.policy.cooldownMaxMs);
  d.h.lastCooldownMs = durationMs;
  d.h.passStreak = [];
  d.h.reprobe = null;
  setService(
    d,
    { state: "cooldown", since: d.now, until: d.now + durationMs, durationMs },
    {
      ...cause,
      detail: `${cause.detail}: cooldown ${minutes(durationMs)}`,
    },
  );
}

function applyAdmin(d: Draft, adminState: AdminState): void {
  const cur = d.h.phase;
  const cause: Cause = { reason: "admin", detail: `admin set the line ${adminState}`, probeIds: [] };
  if (adminState === "active") {
    if (isAdminPhase(cur)) replacePhase(d, cur.resume, cause);
    return;
  }
  if (cur.state === adminState) return;
  replacePhase(d, { state: adminState, resume: isAdminPhase(cur) ? cur.resume : cur }, cause);
}

/** Sets the service phase (under any admin overlay); records a state change when the public state moves. */
function setService(d: Draft, phase: ServicePhase, cause: Cause): void {
  const cur = d.h.phase;
  replacePhase(d, isAdminPhase(cur) ? { state: cur.state, resume: phase } : phase, cause);
}

function replacePhase(d: Draft, phase: Health["phase"], cause: Cause): void {
  const from = d.h.phase.state;
  d.h.phase = phase;
  d.cause = cause;
  if (from !== phase.state) {
    d.h.since = d.now;
    d.effects.push({ kind: "state_change", from, to: phase.state, ...cause });
  }
}

/** Applies the anti-flap hold to the phase's target factor; relabels healthy ↔ degraded by the result. */
function settleFactor(d: Draft): void {
  const op = servicePhase(d.h);
  const target = targetFactor(op, d.h.lineScore, d.policy);
  const next = heldFactor(d.h.factor, target, d.h.holdUntil, d.now);
  if (next < d.h.factor) d.h.holdUntil = d.now + d.policy.holdMs;
  else if (d.h.holdUntil !== null && d.now >= d.h.holdUntil) d.h.holdUntil = null;
  d.h.factor = next;
  if (op.state === "healthy" || op.state === "degraded") {
    const label = next >= 1 ? "healthy" : "degraded";
    if (label !== op.state) setService(d, { state: label }, d.cause);
  }
}

function trackTrend(d: Draft, r: HealthProbe, lineScore: number): void {
  const alerting = d.h.fastProbeUntil === null || d.now >= d.h.fastProbeUntil;
  const step = stepTrend(d.h.trend, { at: d.now, score: lineScore, probeId: r.id }, d.policy, alerting);
  d.h.trend = step.trend;
  if (!step.alert) return;
  const until = d.now + d.policy.fastProbeMs;
  const probeIds = [step.alert.peak.probeId, r.id];
  d.h.fastProbeUntil = until;
  d.effects.push({
    kind: "trend_alert",
    reason: "score_drop",
    from: step.alert.peak.score,
    to: lineScore,
    windowMs: d.policy.trendWindowMs,
    detail: `line score fell from ${round1(step.alert.peak.score)} to ${round1(lineScore)} within ${minutes(d.now - step.alert.peak.at)}`,
    probeIds,
  });
  d.effects.push({ kind: "fast_probe_until", until, probeIds });
}

// The draft never mutates what it shares with the input: arrays and phases are replaced, not
// changed in place; only the per-sample record gets keys added and deleted, so it alone is copied.
function cloneHealth(h: Health): Health {
  return { ...h, sampleFailStreaks: { ...h.sampleFailStreaks } };
}

const keepLast = <T>(xs: T[], n: number): T[] => (xs.length > n ? xs.slice(xs.length - n) : xs);
const round1 = (x: number): number => Math.round(x * 10) / 10;
const minutes = (ms: number): string => `${round1(ms / 60_000)} min`;
const pct = (f: number): string => `${Math.round(f * 100)}%`;
