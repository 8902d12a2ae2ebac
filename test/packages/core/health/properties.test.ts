// Property tests over random sequences of probe results, ticks, admin actions and time.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Health,
  type HealthEvent,
  initialHealth,
  nextTickAt,
  servicePhase,
  transition,
  weightFactor,
} from "../../../../packages/core/src/health/index";
import { MIN, policy } from "./helpers";

const T0 = 1_700_000_000_000;

const probeArb = fc.record({
  sample: fc.constantFrom("a", "b", "c", "d"),
  passed: fc.boolean(),
  hard: fc.boolean(),
  score: fc.integer({ min: 0, max: 100 }),
  lineScore: fc.integer({ min: 0, max: 100 }),
});
const stepArb = fc.record({
  dt: fc.oneof(
    { weight: 10, arbitrary: fc.integer({ min: 0, max: 60_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 15 * MIN }) },
  ),
  event: fc.oneof(
    { weight: 16, arbitrary: probeArb.map((p) => ({ kind: "probe" as const, ...p })) },
    { weight: 2, arbitrary: fc.constant({ kind: "tick" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "next_tick" as const }) },
    { weight: 1, arbitrary: fc.constantFrom("active", "drained", "disabled").map((a) => ({ kind: "admin" as const, a })) },
  ),
});
/** Mostly failing or mostly passing runs, so cooldowns and probations are reached often. */
const biasArb = fc.constantFrom(0.2, 0.5, 0.8, 0.95);

interface Step {
  at: number;
  ev: HealthEvent;
  before: Health;
  after: Health;
  effects: ReturnType<typeof transition>["effects"];
}

function simulate(steps: Array<typeof stepArb extends fc.Arbitrary<infer T> ? T : never>, bias: number): Step[] {
  let h = initialHealth(T0);
  let now = T0;
  let i = 0;
  const out: Step[] = [];
  for (const { dt, event } of steps) {
    let ev: HealthEvent;
    if (event.kind === "probe") {
      // Alternate failing and passing spells of 15 steps; `bias` is the pass rate of the passing spells.
      const spell = Math.floor(i / 15) % 2 === 0 ? 1 - bias : bias;
      const passed = ((i * 7919) % 100) / 100 < spell ? true : event.passed && !event.hard && spell > 0.5;
      ev = {
        type: "probe",
        result: { id: `p${i}`, sampleId: event.sample, score: event.score, passed, hardFailure: !passed && event.hard, startedAt: now },
        lineScore: event.lineScore,
      };
      now += dt;
    } else if (event.kind === "admin") {
      ev = { type: "admin", adminState: event.a as "active" | "drained" | "disabled" };
      now += dt;
    } else if (event.kind === "next_tick") {
      ev = { type: "tick" };
      now = Math.max(now, nextTickAt(h, policy) ?? now + dt);
    } else {
      ev = { type: "tick" };
      now += dt;
    }
    const t = transition(h, ev, policy, now);
    out.push({ at: now, ev, before: h, after: t.health, effects: t.effects });
    h = t.health;
    i++;
  }
  return out;
}

const runs = fc.tuple(fc.array(stepArb, { minLength: 1, maxLength: 150, size: "max" }), biasArb);
const params = { numRuns: 120 };

describe("health properties", () => {
  it("cooldowns run 5, 10, 20, 40, 60, 60 min (reset only by a full recovery); failures double one at most once per interval", () => {
    const ladder = [5, 10, 20, 40, 60].map((m) => m * MIN);
    fc.assert(
      fc.property(runs, ([steps, bias]) => {
        for (const s of simulate(steps, bias)) {
          const before = servicePhase(s.before);
          const after = servicePhase(s.after);
          if (after.state !== "cooldown") continue;
          expect(ladder).toContain(after.durationMs);
          expect(after.until).toBe(after.since + after.durationMs);
          if (before.state !== "cooldown" || after.since !== before.since) {
            // A new cooldown: at least double the last one since the line was fully back. It may have
            // been back a moment before, in this same step: the last stage of its probation (with a
            // pass) ended at this time. Read from the phase, not the effects: under an admin overlay a
            // completed probation changes no public state, so no state_change shows it.
            const op = servicePhase(s.before);
            const completed =
              op.state === "probation" &&
              op.stage === policy.probationSteps.length - 1 &&
              op.stagePasses > 0 &&
              s.at >= op.stageSince + policy.probationStepMs;
            const last = completed ? null : s.before.lastCooldownMs;
            const least = last === null ? policy.cooldownBaseMs : Math.min(2 * last, policy.cooldownMaxMs);
            expect(after.durationMs).toBeGreaterThanOrEqual(least);
            expect(after.since).toBe(s.at);
          } else if (after.durationMs !== before.durationMs) {
            // Doubled by a failure, not twice within 45 s (the default interval the events assume).
            expect(after.durationMs).toBe(Math.min(2 * before.durationMs, policy.cooldownMaxMs));
            if (s.before.doubledAt !== null) expect(s.at - s.before.doubledAt).toBeGreaterThanOrEqual(45_000);
          }
        }
      }),
      params,
    );
  });

  it("no weight rises inside a hold; every fall starts one; a move into cooldown is never held", () => {
    fc.assert(
      fc.property(runs, ([steps, bias]) => {
        let lastDrop = Number.NEGATIVE_INFINITY;
        for (const s of simulate(steps, bias)) {
          if (s.after.factor > s.before.factor) {
            expect(s.at).toBeGreaterThanOrEqual(lastDrop + policy.holdMs);
          }
          if (s.after.factor < s.before.factor) {
            lastDrop = s.at;
            expect(s.after.holdUntil).toBe(s.at + policy.holdMs);
          }
          if (s.ev.type !== "admin" && weightFactor(s.after) > weightFactor(s.before)) {
            expect(s.before.holdUntil === null || s.at >= s.before.holdUntil).toBe(true);
          }
          if (servicePhase(s.after).state === "cooldown") expect(s.after.factor).toBe(0);
        }
      }),
      params,
    );
  });

  it("states, factors and effects agree", () => {
    fc.assert(
      fc.property(runs, ([steps, bias]) => {
        for (const s of simulate(steps, bias)) {
          const wf = weightFactor(s.after);
          expect(wf).toBeGreaterThanOrEqual(0);
          expect(wf).toBeLessThanOrEqual(1);
          const state = s.after.phase.state;
          if (state === "healthy") expect(wf).toBe(1);
          if (state === "degraded") expect(wf).toBeLessThan(1);
          if (state === "drained" || state === "disabled" || state === "cooldown") expect(wf).toBe(0);
          if (state === "probation") expect(wf).toBeLessThanOrEqual(0.5);
          const weight = s.effects.filter((e) => e.kind === "weight_change");
          if (weightFactor(s.before) === wf) expect(weight).toHaveLength(0);
          else expect(weight).toEqual([expect.objectContaining({ from: weightFactor(s.before), to: wf })]);
          const states = s.effects.flatMap((e) => (e.kind === "state_change" ? [e] : []));
          for (const c of states) expect(c.from).not.toBe(c.to);
          if (states.length > 0) {
            expect(states[0]!.from).toBe(s.before.phase.state);
            expect(states.at(-1)!.to).toBe(state);
          } else {
            expect(state).toBe(s.before.phase.state);
          }
          for (const c of states) {
            if (c.reason === "failure_evidence") expect(c.probeIds.length).toBeGreaterThanOrEqual(1);
            if (c.reason === "consecutive_passes") expect(c.probeIds.length).toBeGreaterThanOrEqual(policy.passCount);
          }
        }
      }),
      params,
    );
  });

  it("is JSON-serialisable: a restored health behaves the same", () => {
    fc.assert(
      fc.property(runs, ([steps, bias]) => {
        for (const s of simulate(steps, bias)) {
          const restored = JSON.parse(JSON.stringify(s.before)) as Health;
          expect(restored).toEqual(s.before);
          expect(transition(restored, s.ev, policy, s.at)).toEqual({ health: s.after, effects: s.effects });
        }
      }),
      { numRuns: 60 },
    );
  });

  it("never mutates its input", () => {
    fc.assert(
      fc.property(runs, ([steps, bias]) => {
        for (const s of simulate(steps, bias)) {
          const copy = structuredClone(s.before);
          transition(s.before, s.ev, policy, s.at);
          expect(s.before).toEqual(copy);
        }
      }),
      { numRuns: 30 },
    );
  });
});

describe("the generators reach the interesting states", () => {
  it("cooldown up to 60 min, probation stages, degraded, admin overlays, trend alerts, reprobes", () => {
    const seen = new Set<string>();
    for (const [steps, bias] of fc.sample(runs, { numRuns: 300, seed: 42 })) {
      for (const s of simulate(steps, bias)) {
        const op = servicePhase(s.after);
        seen.add(s.after.phase.state);
        if (op.state === "cooldown") seen.add(`cooldown:${op.durationMs / MIN}`);
        if (op.state === "probation") seen.add(`probation:${op.stage}`);
        for (const e of s.effects) seen.add(e.kind === "state_change" || e.kind === "weight_change" ? `${e.kind}:${e.reason}` : e.kind);
      }
    }
    for (const key of [
      "healthy",
      "degraded",
      "cooldown",
      "probation",
      "drained",
      "disabled",
      "cooldown:5",
      "cooldown:10",
      "cooldown:20",
      "cooldown:40",
      "cooldown:60",
      "probation:0",
      "probation:1",
      "state_change:failure_evidence",
      "state_change:consecutive_passes",
      "state_change:cooldown_elapsed",
      "state_change:probation_failure",
      "state_change:probation_complete",
      "weight_change:probation_step",
      "weight_change:hold_expired",
      "trend_alert",
      "fast_probe_until",
      "reprobe",
    ]) {
      expect(seen, key).toContain(key);
    }
  });
});
