import { describe, expect, it } from "vitest";
import {
  DEFAULT_HEALTH_POLICY,
  failSafeCooldown,
  type Health,
  initialHealth,
  nextTickAt,
  servicePhase,
  transition,
  weightFactor,
} from "../../../../packages/core/src/health/index";
import { MIN, policy, probe, run, tick } from "./helpers";

const T0 = 1_700_000_000_000;
const cause = { detail: "1 failing result(s) could not be applied", probeIds: ["p1"] };

describe("failSafeCooldown: the last resort when a failing result cannot be applied", () => {
  it("takes a healthy line out at once for the base cooldown, with a fail_safe state and weight change", () => {
    const { health, effects } = failSafeCooldown(initialHealth(T0), "active", policy, T0 + MIN, cause);
    expect(health.phase).toEqual({
      state: "cooldown",
      since: T0 + MIN,
      until: T0 + MIN + policy.cooldownBaseMs,
      durationMs: policy.cooldownBaseMs,
    });
    expect(weightFactor(health)).toBe(0);
    expect(nextTickAt(health, policy)).toBe(T0 + MIN + policy.cooldownBaseMs);
    expect(effects.map((e) => [e.kind, "reason" in e ? e.reason : null])).toEqual([
      ["state_change", "fail_safe"],
      ["weight_change", "fail_safe"],
    ]);
    expect(effects[0]).toMatchObject({ from: "healthy", to: "cooldown", probeIds: ["p1"] });
  });

  it("keeps an admin overlay and puts the cooldown under it", () => {
    const { health, effects } = failSafeCooldown(initialHealth(T0, "drained"), "drained", policy, T0, cause);
    expect(health.phase.state).toBe("drained");
    expect(servicePhase(health).state).toBe("cooldown");
    expect(effects).toEqual([]); // the public state and the weight (0 while drained) did not move
  });

  it("leaves a line already in cooldown as it is", () => {
    const cooled = run(initialHealth(T0), [
      [T0, probe(false, { id: "f1", lineScore: 85 })],
      [T0 + 45_000, probe(false, { id: "f2", lineScore: 85 })],
    ]).health;
    expect(servicePhase(cooled).state).toBe("cooldown");
    expect(failSafeCooldown(cooled, "active", policy, T0 + 2 * MIN, cause)).toEqual({ health: cooled, effects: [] });
  });

  it("works from no record at all (an unreadable one)", () => {
    const { health } = failSafeCooldown(null, "active", DEFAULT_HEALTH_POLICY, T0, cause);
    expect(servicePhase(health).state).toBe("cooldown");
  });

  it("hands the line back to the ordinary machine: the cooldown elapses into probation", () => {
    const safe: Health = failSafeCooldown(initialHealth(T0), "active", policy, T0, cause).health;
    const after = transition(safe, tick, policy, T0 + policy.cooldownBaseMs);
    expect(after.health.phase.state).toBe("probation");
    expect(after.effects).toContainEqual(expect.objectContaining({ kind: "state_change", from: "cooldown", to: "probation" }));
  });
});
