import {
  DEFAULT_HEALTH_POLICY,
  type Health,
  type HealthEffect,
  type HealthEvent,
  type HealthPolicy,
  transition,
} from "../../../../packages/core/src/health/index";

export const MIN = 60_000;
export const policy: HealthPolicy = { ...DEFAULT_HEALTH_POLICY, probationSteps: [...DEFAULT_HEALTH_POLICY.probationSteps] };

let seq = 0;
export function probe(
  passed: boolean,
  opts: { sample?: string; score?: number; lineScore?: number; hard?: boolean; id?: string } = {},
): HealthEvent {
  const score = opts.score ?? (passed ? 95 : 20);
  return {
    type: "probe",
    result: {
      id: opts.id ?? `p${++seq}`,
      sampleId: opts.sample ?? "s1",
      score,
      passed,
      hardFailure: opts.hard ?? false,
      startedAt: 0,
    },
    lineScore: opts.lineScore ?? (passed ? 95 : 60),
  };
}
export const tick: HealthEvent = { type: "tick" };

/** Runs events at the given times; returns the last health and every effect. */
export function run(h: Health, steps: Array<[number, HealthEvent]>, p: HealthPolicy = policy) {
  const effects: Array<HealthEffect & { at: number }> = [];
  for (const [at, ev] of steps) {
    const t = transition(h, ev, p, at);
    h = t.health;
    for (const e of t.effects) effects.push({ ...e, at });
  }
  return { health: h, effects };
}
