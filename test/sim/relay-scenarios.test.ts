// What a relay can fake, on the virtual clock (docs/scoring.md#what-a-relay-can-fake): one route
// with two paid lines that answer honestly (their second choice 10% of the time) and free lines
// that substitute the model, never matched it, answer probes well only when they recognise them,
// or inflate usage. The fingerprint samples only (the golden ones are bench/detection/relay.ts's):
// a few simulated hours in a few seconds. The figures over 10+ seeds are in bench/README.md.
import { beforeAll, describe, expect, it } from "vitest";
import type { TableRoute } from "../../packages/core/src/index";
import {
  buildModel,
  byFixedPrompt,
  honest,
  recognisesProbes,
  siblingModel,
  substitute,
  withSecondChoice,
} from "../../packages/lab/src/models";
import { Fleet, type FleetLine } from "./fleet";
import { FINGERPRINT_SAMPLES, relayLine, type UsageReport } from "./relay";

const T0 = Date.UTC(2026, 10, 29);
const MIN = 60_000;
const HOUR = 60 * MIN;
const route: TableRoute = { name: "chat-default", freeShareCap: 0.4, onAllDown: "fail-open" };
const ONSET = T0 + 3 * HOUR;

const real = withSecondChoice(buildModel({ name: "m-large", seed: 4 }), 0.1, 4);
const cheap = siblingModel(real, { name: "m-mini", seed: 1004, differOn: 0.3 });

function line(
  id: string,
  tier: "paid" | "free",
  seed: number,
  o: Partial<Parameters<typeof relayLine>[0]> & { joinAt?: number } = {},
): FleetLine {
  const { joinAt, ...relay } = o;
  return {
    id,
    tier,
    baseWeight: 100,
    model: "m-large",
    ...(joinAt !== undefined ? { joinAt } : {}),
    respond: relayLine({ name: id, seed, real, servingAt: () => honest(real), ...relay }),
  };
}

const honestUsage = (jitter: number, offset: number): UsageReport => ({ jitter, offset });

function simulate(): Fleet {
  const f = new Fleet({
    route,
    start: T0,
    seed: 4,
    samples: FINGERPRINT_SAMPLES,
    lines: [
      line("paid-a", "paid", 1, { usageAt: () => honestUsage(2, 0) }),
      line("paid-b", "paid", 2, { usageAt: () => honestUsage(0, -2) }),
      line("substituted", "free", 3, { servingAt: (at) => (at >= ONSET ? substitute(real, cheap) : honest(real)) }),
      line("never-matched", "free", 4, { joinAt: ONSET, servingAt: () => honest(cheap) }),
      line("knows-the-prompts", "free", 5, {
        servingAt: (at) => (at >= ONSET ? recognisesProbes(real, cheap, byFixedPrompt(0)) : honest(real)),
      }),
      line("inflates", "free", 6, { usageAt: (at) => (at >= ONSET ? { factor: 1.2, offset: 2 } : honestUsage(0, 2)) }),
    ],
  });
  f.runUntil(ONSET + HOUR);
  return f;
}

let fleet: Fleet;
// Four simulated hours of six lines: a few seconds.
beforeAll(() => {
  fleet = simulate();
});

const cooldownAt = (id: string) =>
  fleet.events.find((e) => e.lineId === id && e.at >= ONSET && e.effect.kind === "state_change" && e.effect.to === "cooldown");
const movedAt = (id: string) => fleet.events.find((e) => e.lineId === id && e.effect.kind === "fingerprint" && e.effect.moved);

describe("what a relay can fake, simulated", () => {
  it("a substituted model (its mode differs on 30% of the bank) is out within 30 min, and the cause names the fingerprints that moved", () => {
    const moved = movedAt("substituted");
    const cooldown = cooldownAt("substituted");
    expect(moved?.at).toBeGreaterThan(ONSET);
    expect((cooldown?.at ?? Number.POSITIVE_INFINITY) - ONSET).toBeLessThan(30 * MIN);
    expect(cooldown?.effect.kind === "state_change" && cooldown.effect.detail).toMatch(/fingerprints moved: fp-[a-z0-9-]+ \((own|peers)/);
    expect(moved?.effect.kind === "fingerprint" && moved.effect.detail).toMatch(/anchor "[^"]+" \d+%.*; now /);
  });

  it("a line that never matched its paid peers is flagged within an hour of joining, by its peers' anchors", () => {
    const moved = movedAt("never-matched");
    expect(moved).toBeDefined();
    expect((moved?.at ?? 0) - ONSET).toBeLessThan(HOUR);
    expect(moved?.effect.kind === "fingerprint" && moved.effect.references).toContain("peers");
    expect(fleet.health("never-matched").phase.state).not.toBe("healthy");
  });

  it("a relay that answers the fixed wording of each prompt well is caught on the other phrasings", () => {
    expect((cooldownAt("knows-the-prompts")?.at ?? Number.POSITIVE_INFINITY) - ONSET).toBeLessThan(45 * MIN);
  });

  it("usage inflated ×1.2 fails the usage check within 2 probes; honest lines 2 tokens apart never fail it", () => {
    const after = fleet.results("inflates").filter((r) => r.at >= ONSET);
    expect(after.findIndex((r) => r.failedChecks.includes("usage"))).toBeLessThan(2);
    for (const id of ["paid-a", "paid-b", "substituted", "knows-the-prompts"])
      expect(
        fleet
          .results(id)
          .filter((r) => r.failedChecks.includes("usage"))
          .map((r) => r.sampleId),
      ).toEqual([]);
    expect(fleet.results("inflates").filter((r) => r.at < ONSET && r.failedChecks.includes("usage"))).toEqual([]);
  });

  it("ordinary nondeterminism (10% second choices) fails no fingerprint check and keeps the paid lines at full weight", () => {
    for (const id of ["paid-a", "paid-b"]) {
      expect(fleet.results(id).filter((r) => r.failedChecks.includes("fingerprint"))).toEqual([]);
      expect(fleet.factorTimeline(id).map((p) => p.factor)).toEqual([1]);
    }
    expect(fleet.results("paid-a").length).toBeGreaterThan(10 * 4 * 80 * 0.95);
  });
});
