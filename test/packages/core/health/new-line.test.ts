// A new line earns its weight (docs/health.md#new-lines): unprobed at the probation share until its
// first result, then on probation until each of its samples has passed once, then in service. A line
// bad from its first probe never carries more than the probation share.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  describeHealth,
  type HealthEvent,
  lineStatus,
  newLineHealth,
  parseHealth,
  transition,
  weightFactor,
} from "../../../../packages/core/src/health/index";
import { MIN, policy, probe, run } from "./helpers";

const SAMPLES = ["s1", "s2", "s3", "s4"];
const withSamples = (e: HealthEvent, sampleIds: readonly string[] = SAMPLES): HealthEvent => (e.type === "probe" ? { ...e, sampleIds } : e);

describe("new lines", () => {
  it("a line nobody has judged is unprobed at the probation share, shown unjudged (stored or never stored)", () => {
    const h = newLineHealth(0);
    expect(h.phase).toEqual({ state: "unprobed" });
    expect(weightFactor(h)).toBe(0.2);
    for (const status of [lineStatus("active", null, policy, 0), lineStatus("active", h, policy, 0)])
      expect(status).toMatchObject({ state: "unprobed", tone: "unjudged", factor: 0.2 });
    expect(lineStatus("drained", null, policy, 0)).toMatchObject({ state: "drained", factor: 0 });
    expect(describeHealth(h, policy).state).toBe("unprobed");
    // Stored and read back, the record keeps its phase (and a new line's probation its passed samples).
    expect(parseHealth(JSON.parse(JSON.stringify(h)))?.phase).toEqual({ state: "unprobed" });
  });

  it("its first result starts probation; each sample passing once puts it in service at full weight", () => {
    const steps: Array<[number, HealthEvent]> = SAMPLES.map((s, k) => [k * 10_000, withSamples(probe(true, { sample: s }))]);
    const partial = run(newLineHealth(0), steps.slice(0, 3));
    expect(partial.health.phase).toMatchObject({ state: "probation", stage: 0, newLine: { passed: ["s1", "s2", "s3"] } });
    expect(weightFactor(partial.health)).toBe(0.2);
    expect(parseHealth(JSON.parse(JSON.stringify(partial.health)))?.phase).toEqual(partial.health.phase);
    const all = run(partial.health, steps.slice(3));
    expect(all.health.phase).toEqual({ state: "healthy" });
    expect(weightFactor(all.health)).toBe(1);
    const changes = [...partial.effects, ...all.effects].filter((e) => e.kind === "state_change");
    expect(changes.map((e) => e.kind === "state_change" && [e.from, e.to, e.reason])).toEqual([
      ["unprobed", "probation", "first_probe"],
      ["probation", "healthy", "probation_complete"],
    ]);
  });

  it("a sample passing twice does not stand in for one that has not passed", () => {
    const { health } = run(
      newLineHealth(0),
      [0, 1, 2, 3].map((k) => [k * 10_000, withSamples(probe(true, { sample: "s1" }))] as [number, HealthEvent]),
    );
    expect(health.phase).toMatchObject({ state: "probation", newLine: { passed: ["s1"] } });
    expect(weightFactor(health)).toBe(0.2);
  });

  it("a line failing from its first probe goes to cooldown and never carries more than its probation share", () => {
    const steps: Array<[number, HealthEvent]> = [];
    for (let k = 0; k < 40; k++) steps.push([k * 10_000, withSamples(probe(false, { sample: SAMPLES[k % 4] }))]);
    let h = newLineHealth(0);
    let max = weightFactor(h);
    for (const [at, e] of steps) {
      h = transition(h, e, policy, at).health;
      max = Math.max(max, weightFactor(h));
    }
    expect(max).toBe(0.2);
    expect(h.phase.state).toBe("cooldown");
  });

  it("property: a line whose every probe fails (hard or content, any samples, any times) never carries more than 20%", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: 20 * MIN }),
            sample: fc.constantFrom(...SAMPLES),
            hard: fc.boolean(),
            tick: fc.boolean(),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        (events) => {
          let h = newLineHealth(0);
          let at = 0;
          for (const e of events) {
            at += e.gap;
            const event: HealthEvent = e.tick ? { type: "tick" } : withSamples(probe(false, { sample: e.sample, hard: e.hard }));
            h = transition(h, event, policy, at).health;
            expect(weightFactor(h)).toBeLessThanOrEqual(0.2);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
