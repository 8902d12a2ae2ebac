// The docs/health.md state machine as one pure function: (health, event, policy, now) → (health, effects).
import { type FingerprintStep, type FingerprintTrack, failingReferences, stepFingerprint, tallyAnswers } from "../fingerprint/track";
import { stepShape } from "../shape/shape";
import type { AdminState } from "../types";
import { stepUsage, type UsageTrack } from "../usage/usage";
import {
  addEvidence,
  contentThreshold,
  emptyEvidence,
  failingShare,
  hardThreshold,
  type ProbeOutcome,
  probationThreshold,
  resetEvidence,
  worstSample,
} from "./evidence";
import type { Health, HealthEffect, HealthEvent, HealthProbe, HealthReason, LengthTrack, ServicePhase, Transition } from "./health-types";
import { trackLength } from "./lengths";
import { DEFAULT_HEALTH_POLICY, type HealthPolicy } from "./policy";
import { stepTrend } from "./trend";
import { heldFactor, isAdminPhase, servicePhase, targetFactor, unprobedFactor, weightFactor } from "./weight-factor";

/** A probe interval to assume when the caller gives none (docs/api.md default). */
const DEFAULT_INTERVAL_MS = 45_000;
/** Failed probe ids an event names at most. */
const FAILURES_KEPT = 8;
const HOUR = 3_600_000;
/** Cooldown start times kept for the backoff. */
const MAX_COOLDOWNS_KEPT = 12;

/**
 * A line nobody has judged yet (docs/health.md#new-lines): unprobed at the first probation share (or
 * under an admin overlay). Its first probe result starts its probation; it is in service at full
 * weight once each of its samples has passed once, so a line bad from its first probe never carries
 * more than that share.
 */
export function newLineHealth(
  now: number,
  adminState: AdminState = "active",
  policy: Pick<HealthPolicy, "hardRatePrior" | "probationSteps"> = DEFAULT_HEALTH_POLICY,
): Health {
  return { ...initialHealth(now, adminState, policy, { state: "unprobed" }), factor: unprobedFactor(policy) };
}

/**
 * A line taken to be in service: healthy at full weight (or under an admin overlay). What a replay
 * starts its recorded lines from; a line the registry just got starts with newLineHealth.
 */
export function initialHealth(
  now: number,
  adminState: AdminState = "active",
  policy: Pick<HealthPolicy, "hardRatePrior"> = DEFAULT_HEALTH_POLICY,
  service: ServicePhase = { state: "healthy" },
): Health {
  return {
    phase: adminState === "active" ? service : { state: adminState, resume: service },
    since: now,
    factor: 1,
    holdUntil: null,
    lineScore: null,
    failStreak: [],
    passStreak: [],
    evidence: emptyEvidence(policy),
    lengths: {},
    cooldowns: [],
    lastCooldownMs: null,
    doubledAt: null,
    trend: [],
    fastProbeUntil: null,
    reprobe: null,
    liveSuspectSince: null,
    fingerprints: {},
    usage: {},
    shape: null,
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
  /** The cause of what moves now; null: the event's own (see causeOf), made only if an effect names it. */
  cause: Cause | null;
  event: HealthEvent;
  policy: HealthPolicy;
  now: number;
}

/** The cause of what moves, the event's own until a step names another. */
function causeOf(d: Draft): Cause {
  if (d.cause === null) {
    const e = d.event;
    // Most probes move nothing: their cause is written only when an effect carries it.
    d.cause =
      e.type === "probe"
        ? { reason: "line_score", detail: `line score ${round1(e.lineScore)}`, probeIds: [e.result.id] }
        : { reason: "hold_expired", detail: "anti-flap hold over", probeIds: [] };
  }
  return d.cause;
}

export function transition(health: Health, event: HealthEvent, policy: HealthPolicy, now: number): Transition {
  const d: Draft = { h: cloneHealth(health), effects: [], cause: null, event, policy, now };
  // Timers first, so a late event (or one after a restart) sees the phase it should.
  advanceTime(d);
  if (event.type === "probe")
    applyProbe(d, event.result, event.lineScore, event.intervalMs ?? DEFAULT_INTERVAL_MS, event.sampleIds ?? [event.result.sampleId]);
  else if (event.type === "admin") applyAdmin(d, event.adminState);
  else if (event.type === "live") applyLive(d, event.suspect, event.reason, event.probeIds);
  settleFactor(d);
  const before = weightFactor(health);
  const after = weightFactor(d.h);
  if (before !== after) {
    d.effects.push({ kind: "weight_change", from: before, to: after, ...causeOf(d) });
  }
  return { health: d.h, effects: d.effects };
}

/** The earliest time a `tick` can change this health; null: only a probe or admin event can. */
export function nextTickAt(h: Health, policy: HealthPolicy): number | null {
  const op = servicePhase(h);
  let at: number | null = null;
  if (op.state === "cooldown") at = op.until;
  if (op.state === "probation" && op.stagePasses > 0) at = earlier(at, op.stageSince + policy.probationStepMs);
  if (h.holdUntil !== null && targetFactor(op, h, policy) > h.factor) at = earlier(at, h.holdUntil);
  return at;
}

function advanceTime(d: Draft): void {
  const op = servicePhase(d.h);
  if (op.state === "cooldown" && d.now >= op.until) {
    d.h.failStreak = [];
    d.h.passStreak = [];
    d.h.evidence = resetEvidence(d.h.evidence);
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
      { ...op, stage, stageSince: d.now, stagePasses: 0 },
      cause("probation_step", `probation passed for ${minutes(d.policy.probationStepMs)}: ${pct(nextFactor)}`),
    );
    return;
  }
  completeProbation(d, cause("probation_complete", "probation complete"));
}

/** Back in service: healthy at full weight, or degraded while the score (or the hold) keeps it lower. */
function completeProbation(d: Draft, cause: Cause): void {
  d.h.lastCooldownMs = null;
  // The recent wrong-answer rate still remembers the fault; the line has just proven itself without it.
  d.h.evidence = { ...d.h.evidence, recentContent: {}, checked: {} };
  const factor = heldFactor(d.h.factor, targetFactor({ state: "healthy" }, d.h, d.policy), d.h.holdUntil, d.now);
  setService(d, { state: factor >= 1 ? "healthy" : "degraded" }, cause);
}

function outcomeOf(r: HealthProbe): ProbeOutcome {
  if (r.hardFailure) return "hard";
  return r.passed ? "pass" : "content";
}

function applyProbe(d: Draft, r: HealthProbe, lineScore: number, intervalMs: number, sampleIds: readonly string[]): void {
  const { policy, now } = d;
  // A new line's first result starts its probation: it earns its weight from here (docs/health.md#new-lines).
  if (servicePhase(d.h).state === "unprobed")
    setService(
      d,
      { state: "probation", stage: 0, stageSince: now, stagePasses: 0, newLine: { passed: [] } },
      {
        reason: "first_probe",
        detail: `first probe result: on probation until each of its ${sampleIds.length} sample(s) has passed`,
        probeIds: [r.id],
      },
    );
  d.h.lineScore = lineScore;
  trackTrend(d, r, lineScore);
  const confirming = d.h.reprobe?.sampleId === r.sampleId;
  if (confirming) d.h.reprobe = null;

  const outcome = outcomeOf(r);
  const before = servicePhase(d.h);
  const inService = before.state === "healthy" || before.state === "degraded";
  d.h.evidence = addEvidence(d.h.evidence, { sampleId: r.sampleId, outcome, confirming, inService }, policy);
  if (outcome === "pass") {
    // Anchors learn only from a line healthy at full weight; the recent mean from every pass.
    const learn = before.state === "healthy" && d.h.factor >= 1;
    // A fingerprint answer is a word or a number: its length says nothing about truncation, and
    // "owl" for "dolphin" must not read as a shorter answer (docs/scoring.md#what-a-relay-can-fake).
    if (r.contentLength !== undefined && !r.fingerprint) {
      const was = d.h.lengths[r.sampleId];
      const track = trackLength(was, r.contentLength, learn);
      // Answers of a steady length settle the track: the record is then shared, not copied.
      if (!sameTrack(was, track)) d.h.lengths = { ...d.h.lengths, [r.sampleId]: track };
    }
    d.h.passStreak = keepLast([...d.h.passStreak, r.id], releasePasses(d.h, policy, now));
    // A confirming probe speaks for its sample only: its pass leaves the line's failures alone.
    if (!confirming && d.h.failStreak.length > 0) d.h.failStreak = [];
  } else {
    d.h.passStreak = [];
    d.h.failStreak = keepLast([...d.h.failStreak, r.id], FAILURES_KEPT);
  }
  trackRelay(d, r, outcome === "pass", before.state === "healthy" && d.h.factor >= 1);

  switch (before.state) {
    case "healthy":
    case "degraded": {
      if (outcome === "pass") return;
      const verdict = failing(d, contentThreshold(policy), hardThreshold(policy));
      if (verdict) enterCooldown(d, verdict);
      else askConfirm(d, r);
      return;
    }
    case "cooldown": {
      if (outcome !== "pass") {
        // Failing probes double the cooldown (capped), at most once per probe interval.
        if (d.h.doubledAt !== null && now - d.h.doubledAt < intervalMs) return;
        const durationMs = Math.min(before.durationMs * 2, policy.cooldownMaxMs);
        if (durationMs === before.durationMs) return;
        d.h.lastCooldownMs = durationMs;
        d.h.doubledAt = now;
        setService(
          d,
          { ...before, until: Math.max(before.until, before.since + durationMs), durationMs },
          {
            reason: "consecutive_failures",
            detail: `failed during cooldown: ${minutes(durationMs)}`,
            probeIds: [r.id],
          },
        );
        return;
      }
      const needed = releasePasses(d.h, policy, now);
      const halfway = before.since + before.durationMs / 2;
      const returns = recentCooldowns(d.h, now) - 1;
      const ready = d.h.evidence.failing.length === 0 && failingShare(d.h.evidence, policy) === null && d.h.liveSuspectSince === null;
      if (d.h.passStreak.length >= needed && ready && (returns === 0 || now >= halfway)) {
        setService(
          d,
          { state: "probation", stage: 0, stageSince: now, stagePasses: 0 },
          {
            reason: "consecutive_passes",
            detail: `${d.h.passStreak.length} consecutive passed probes${returns > 0 ? ` (${returns} return(s) to cooldown within the hour)` : ""}`,
            probeIds: [...d.h.passStreak],
          },
        );
        d.h.evidence = resetEvidence(d.h.evidence);
      }
      return;
    }
    case "unprobed":
      return; // not reached: the first result started probation above
    case "probation": {
      if (outcome === "pass") {
        const newLine = before.newLine && { passed: [...new Set([...before.newLine.passed, r.sampleId])] };
        const next = { ...before, stagePasses: before.stagePasses + 1, ...(newLine ? { newLine } : {}) };
        setService(d, next, d.cause);
        if (newLine && sampleIds.every((id) => newLine.passed.includes(id))) {
          completeProbation(d, {
            reason: "probation_complete",
            detail: `new line: each of its ${sampleIds.length} sample(s) passed`,
            probeIds: [...d.h.passStreak],
          });
          return;
        }
        stepProbation(d, next);
        return;
      }
      // A content failure sends the line back (unless its sample often fails: then it takes more);
      // a hard failure only when its confirming re-probe does not clear it, or the evidence says so.
      const bar = probationThreshold(policy);
      const verdict = failing(d, bar, hardThreshold(policy));
      if (verdict) enterCooldown(d, { ...verdict, reason: "probation_failure", detail: `in probation: ${verdict.detail}` });
      else if (outcome === "hard" && confirming)
        enterCooldown(d, {
          reason: "probation_failure",
          detail: "in probation: a hard failure its confirming probe did not clear",
          probeIds: [...d.h.failStreak],
        });
      else askConfirm(d, r);
      return;
    }
  }
}

/**
 * What a relay can fake (docs/scoring.md#what-a-relay-can-fake): the fingerprint, usage and shape
 * tracks step with every answer; their anchors learn only from a line healthy at full weight
 * (`inService`), fingerprints and usage only from passing probes. A fingerprint decision itself
 * reached the evidence above already: the scorer failed the probe's `fingerprint` check.
 */
function trackRelay(d: Draft, r: HealthProbe, passed: boolean, inService: boolean): void {
  if (r.fingerprint) {
    const was = d.h.fingerprints[r.sampleId];
    const track = stepFingerprint(was, r.fingerprint, inService && passed);
    d.h.fingerprints = { ...d.h.fingerprints, [r.sampleId]: track };
    const before = was ? failingReferences(was) : [];
    const after = failingReferences(track);
    if ((before.length === 0) !== (after.length === 0)) fingerprintEffect(d, r, r.fingerprint, track, after);
  }
  if (r.usage) {
    const was = d.h.usage[r.sampleId];
    const track = stepUsage(was, r.usage, inService && passed);
    d.h.usage = { ...d.h.usage, [r.sampleId]: usageVerdict(d, r, was?.failing, track) };
  }
  if (r.shape) {
    const { track, change } = stepShape(d.h.shape ?? undefined, r.shape, inService, d.now);
    d.h.shape = track;
    if (change) {
      d.effects.push({ kind: "shape_change", from: change.from, to: change.to, detail: change.detail, probeIds: [r.id] });
      // Like a trend alert: look closer, sooner; the change decides nothing by itself.
      const until = Math.max(d.h.fastProbeUntil ?? 0, d.now + d.policy.fastProbeMs);
      d.h.fastProbeUntil = until;
      d.effects.push({ kind: "fast_probe_until", until, probeIds: [r.id] });
    }
  }
}

/** The track with the probe's usage verdict kept (absent: not judged, the last one stands), and an effect when it flips. */
function usageVerdict(d: Draft, r: HealthProbe, was: string | undefined, track: UsageTrack): UsageTrack {
  if (r.usageFailure === undefined) return was === undefined ? track : { ...track, failing: was };
  const { failing: _old, ...rest } = track;
  const next: UsageTrack = r.usageFailure === null ? rest : { ...rest, failing: r.usageFailure };
  if ((was === undefined) !== (r.usageFailure === null))
    d.effects.push({
      kind: "usage",
      sampleId: r.sampleId,
      failing: r.usageFailure !== null,
      detail:
        r.usageFailure === null ? `usage of sample ${r.sampleId} as expected again` : `usage of sample ${r.sampleId}: ${r.usageFailure}`,
      probeIds: [r.id],
    });
  return next;
}

function fingerprintEffect(
  d: Draft,
  r: HealthProbe,
  step: FingerprintStep,
  track: FingerprintTrack,
  references: Array<"own" | "peers">,
): void {
  const variant = track.variants[step.variant];
  const anchor = Object.entries(variant?.anchor.shares ?? {})
    .sort((a, b) => b[1] - a[1])
    .map(([answer, share]) => ({ answer, share: Math.round(share * 1000) / 1000 }));
  const now = tallyAnswers(variant?.recent ?? []);
  const moved = references.length > 0;
  const notes = step.moved ?? [];
  const detail = moved
    ? `fingerprint of sample ${r.sampleId}: ${notes.length > 0 ? notes.map((m) => m.detail).join("; ") : `evidence ${round1(Math.max(track.own, track.peers))} ≥ ${round1(track.threshold)}`}`
    : `fingerprint of sample ${r.sampleId} back under its threshold (own ${round1(track.own)}, peers ${round1(track.peers)} < ${round1(track.threshold)})`;
  const first = notes[0];
  d.effects.push({
    kind: "fingerprint",
    sampleId: r.sampleId,
    moved,
    references,
    detail,
    anchor: first?.anchor ?? anchor,
    now: first?.now ?? now,
    probeIds: [r.id],
  });
}

/** "; fingerprints moved: fp-animal (own, peers)" for a cause, when samples' fingerprints are failing. */
function fingerprintNote(h: Health): string {
  const moved = Object.entries(h.fingerprints).flatMap(([sampleId, t]) => {
    const refs = failingReferences(t);
    return refs.length > 0 ? [`${sampleId} (${refs.join(", ")})`] : [];
  });
  return moved.length > 0 ? `; fingerprints moved: ${moved.join(", ")}` : "";
}

/** The cause when the evidence crosses a threshold; null while it does not. */
function failing(d: Draft, content: number, hard: number): Cause | null {
  const cause = failingCause(d, content, hard);
  return cause === null ? null : { ...cause, detail: `${cause.detail}${fingerprintNote(d.h)}` };
}

function failingCause(d: Draft, content: number, hard: number): Cause | null {
  const e = d.h.evidence;
  const probeIds = [...d.h.failStreak];
  const worst = worstSample(e);
  if (e.hard >= hard)
    return {
      reason: "failure_evidence",
      detail: `hard failures: evidence ${round1(e.hard)} ≥ ${round1(hard)} at a usual rate of ${pct1(e.hardRate)}`,
      probeIds,
    };
  if (e.content >= content)
    return {
      reason: "failure_evidence",
      detail: `content failures across samples: evidence ${round1(e.content)} ≥ ${round1(content)}`,
      probeIds,
    };
  const share = failingShare(e, d.policy);
  if (share)
    return {
      reason: "failure_evidence",
      detail: `sample ${share.sampleId} failed ${pct(share.rate)} of its recent probes (≥ ${pct(d.policy.failingShare)})`,
      probeIds,
    };
  if (worst && worst.value >= content) {
    const rate = e.contentBase[worst.sampleId] ?? e.contentRate[worst.sampleId] ?? d.policy.rateFloor;
    return {
      reason: "failure_evidence",
      detail: `content failures of sample ${worst.sampleId}: evidence ${round1(worst.value)} ≥ ${round1(content)} at a usual rate of ${pct1(rate)}`,
      probeIds,
    };
  }
  return null;
}

/** A failure that did not decide: probe the same sample again soon, so the next one can. */
function askConfirm(d: Draft, r: HealthProbe): void {
  if (d.policy.reprobeDelayMs === null) return;
  const at = d.now + d.policy.reprobeDelayMs;
  d.h.reprobe = { at, sampleId: r.sampleId, probeId: r.id };
  d.effects.push({ kind: "reprobe", at, sampleId: r.sampleId, probeIds: [r.id] });
}

/**
 * Cooldowns that count for the backoff (the running one included): those begun within the last hour,
 * and every one since the line was last in service (a line that never stays back keeps its backoff).
 */
const recentCooldowns = (h: Health, now: number): number => {
  const op = servicePhase(h).state;
  if (op !== "healthy" && op !== "degraded") return h.cooldowns.length;
  let n = 0;
  for (const t of h.cooldowns) if (now - t < HOUR) n++;
  return n;
};

/** Passes in a row that end a cooldown early: passCount, doubled for each return within the hour. */
function releasePasses(h: Health, policy: HealthPolicy, now: number): number {
  const returns = Math.max(0, recentCooldowns(h, now) - 1);
  return policy.passCount * 2 ** Math.min(returns, 6);
}

function enterCooldown(d: Draft, cause: Cause): void {
  const last = d.h.lastCooldownMs;
  const returns = recentCooldowns(d.h, d.now);
  const byReturns = d.policy.cooldownBaseMs * 2 ** Math.min(returns, 20);
  const durationMs = Math.min(Math.max(byReturns, last === null ? d.policy.cooldownBaseMs : last * 2), d.policy.cooldownMaxMs);
  d.h.lastCooldownMs = durationMs;
  const op = servicePhase(d.h).state;
  const kept = op === "healthy" || op === "degraded" ? d.h.cooldowns.filter((t) => d.now - t < HOUR) : d.h.cooldowns;
  d.h.cooldowns = [...kept.slice(-(MAX_COOLDOWNS_KEPT - 1)), d.now];
  d.h.doubledAt = null;
  d.h.passStreak = [];
  d.h.reprobe = null;
  d.h.evidence = resetEvidence(d.h.evidence);
  setService(
    d,
    { state: "cooldown", since: d.now, until: d.now + durationMs, durationMs },
    {
      ...cause,
      detail: `${cause.detail}: cooldown ${minutes(durationMs)}`,
    },
  );
}

/**
 * Live traffic as evidence next to the probes (docs/live-evidence.md): a line whose live answers keep failing leaves
 * the table even while its golden probes pass; a single suspect judgment waits for the next report (or
 * for its confirming probes, which arrive as probe events); an ordinary live error rate is never suspect.
 */
function applyLive(d: Draft, suspect: boolean, reason: string, probeIds: string[]): void {
  if (!suspect) {
    d.h.liveSuspectSince = null;
    return;
  }
  const since = d.h.liveSuspectSince ?? d.now;
  d.h.liveSuspectSince = since;
  const op = servicePhase(d.h);
  const held = d.now - since >= d.policy.liveConfirmMs;
  const cause: Cause = { reason: "live_evidence", detail: reason, probeIds: [...probeIds, ...d.h.failStreak] };
  if (op.state === "probation" || op.state === "unprobed" || ((op.state === "healthy" || op.state === "degraded") && held)) {
    enterCooldown(d, { ...cause, detail: `${reason}; failing for ${round1((d.now - since) / 1000)} s` });
  }
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
function setService(d: Draft, phase: ServicePhase, cause: Cause | null): void {
  const cur = d.h.phase;
  replacePhase(d, isAdminPhase(cur) ? { state: cur.state, resume: phase } : phase, cause);
}

function replacePhase(d: Draft, phase: Health["phase"], cause: Cause | null): void {
  const from = d.h.phase.state;
  d.h.phase = phase;
  d.cause = cause;
  if (from !== phase.state) {
    d.h.since = d.now;
    d.effects.push({ kind: "state_change", from, to: phase.state, ...causeOf(d) });
  }
}

/** Applies the anti-flap hold to the phase's target factor; relabels healthy ↔ degraded by the result. */
function settleFactor(d: Draft): void {
  const op = servicePhase(d.h);
  const raw = targetFactor(op, d.h, d.policy);
  // A graded line moves by more than one step or to full weight: a rate that wobbles around a
  // step boundary must not republish the table at every probe.
  const graded = (op.state === "healthy" || op.state === "degraded") && d.h.factor < 1 && raw < 1;
  const target = graded && Math.abs(raw - d.h.factor) < 1.5 * d.policy.factorStep ? d.h.factor : raw;
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

// The draft never mutates what it shares with the input: arrays, records and phases are replaced,
// never changed in place, so a shallow copy is enough.
function cloneHealth(h: Health): Health {
  return { ...h };
}

const sameTrack = (a: LengthTrack | undefined, b: LengthTrack): boolean =>
  a !== undefined && (a === b || (Object.is(a.anchor, b.anchor) && a.anchorN === b.anchorN && Object.is(a.recent, b.recent)));
const earlier = (a: number | null, b: number): number => (a === null ? b : Math.min(a, b));
const keepLast = <T>(xs: T[], n: number): T[] => (xs.length > n ? xs.slice(xs.length - n) : xs);
const round1 = (x: number): number => Math.round(x * 10) / 10;
const minutes = (ms: number): string => `${round1(ms / 60_000)} min`;
const pct = (f: number): string => `${Math.round(f * 100)}%`;
const pct1 = (f: number): string => `${round1(f * 100)}%`;
