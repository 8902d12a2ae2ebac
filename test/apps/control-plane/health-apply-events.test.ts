import { DEFAULT_HEALTH_POLICY, type HealthEvent, initialHealth, newLineHealth, transition } from "@linewatch/core";
import { describe, expect, it } from "vitest";
import { type Applied, applyEvents, type HealthMachine } from "../../../apps/control-plane/src/health/apply-events";
import { HealthFaults } from "../../../apps/control-plane/src/health/health-faults";
import { silentLogger } from "../../../apps/control-plane/src/logger";
import type { CachedLine } from "../../../apps/control-plane/src/registry-cache";

// The one apply path of the health shell (issue 23 item 3): probe batches and single events (live,
// admin, tick) both go through applyEvents; these check it alone, on core's machine and a faulty one.
const NOW = Date.UTC(2026, 0, 5, 12, 0, 0);
const policy = { ...DEFAULT_HEALTH_POLICY, probationSteps: [...DEFAULT_HEALTH_POLICY.probationSteps] };
const line: CachedLine = {
  id: "11111111-1111-4111-8111-111111111111",
  name: "free-a",
  tier: "free",
  protocol: "openai-chat",
  baseUrl: "http://127.0.0.1:9/v1",
  model: "m",
  headers: {},
  routes: [{ route: "chat", weight: 1 }],
  probeIntervalSec: 45,
  timeoutMs: null,
  dailyQuota: null,
  probeBudgetPct: 10,
  maxShare: null,
  adminState: "active",
  hasApiKey: false,
  createdAt: new Date(NOW).toISOString(),
  apiKey: null,
  updatedAt: new Date(NOW).toISOString(),
};

let seq = 0;
const probe = (passed: boolean): HealthEvent => ({
  type: "probe",
  result: { id: `p${++seq}`, sampleId: "s1", score: passed ? 95 : 10, passed, hardFailure: !passed, startedAt: NOW },
  lineScore: passed ? 95 : 10,
  intervalMs: 45_000,
});

function machine(faulty = false): HealthMachine & { faults: HealthFaults } {
  return {
    faults: new HealthFaults(silentLogger),
    transition: faulty
      ? () => {
          throw new RangeError("injected fault");
        }
      : transition,
  };
}

const written = (a: Applied) => {
  if (!a.ok) throw new Error(`not applied: ${String(a.error)}`);
  return a;
};

describe("applyEvents", () => {
  it("applies events in order: one revision per event, each effect's row keyed by the step it came from", () => {
    const m = machine();
    const events = [probe(false), probe(false), probe(false), probe(false)];
    const a = written(applyEvents(m, { line, policy, row: { health: initialHealth(NOW - 60_000), revision: 7 }, events, now: NOW }));
    expect(a.write).toMatchObject({ lineId: line.id, expectedRevision: 7, revision: 11, state: "cooldown" });
    expect(a.write.tickAt?.getTime()).toBe(NOW + policy.cooldownBaseMs);
    expect(a.eventRows.length).toBeGreaterThan(0);
    for (const row of a.eventRows) expect(row.dedupeKey).toMatch(new RegExp(`^line:${line.id}:(8|9|10|11):\\d+$`));
    expect(a.eventRows.map((r) => r.kind)).toContain("state_change");
    expect(a.moved.before.phase.state).toBe("healthy");
    expect(m.faults.counts()).toMatchObject({ unappliedResults: 0, failSafeCooldowns: 0 });
  });

  it("writes a line never probed from core's new-line health, and the state core's lineStatus gives", () => {
    const drained = { ...line, adminState: "drained" as const };
    const a = written(
      applyEvents(machine(), { line: drained, policy, row: { health: null, revision: 0 }, events: [probe(true)], now: NOW }),
    );
    expect(a.moved.before).toEqual(newLineHealth(NOW, "drained", policy));
    expect(a.write.state).toBe("drained");
    // Under the overlay, its first result started its probation, and its one sample passing ended it.
    expect(a.write.health.phase).toEqual({ state: "drained", resume: { state: "healthy" } });
  });

  it("takes a line to cooldown when a failing result among those it cannot apply, as one step", () => {
    const m = machine(true);
    const events = [probe(true), probe(false), probe(true)];
    const failed = events[1]?.type === "probe" ? events[1].result.id : "";
    const a = written(applyEvents(m, { line, policy, row: { health: initialHealth(NOW - 60_000), revision: 3 }, events, now: NOW }));
    expect(a.write).toMatchObject({ expectedRevision: 3, revision: 4, state: "cooldown" });
    expect(a.write.tickAt?.getTime()).toBe(NOW + policy.cooldownBaseMs);
    const change = a.eventRows.find((r) => r.kind === "state_change");
    expect(change?.reason).toMatch(/^fail_safe: 1 failing result\(s\) could not be applied/);
    expect(change?.data).toMatchObject({ from: "healthy", to: "cooldown", probeIds: [failed] });
    expect(change?.dedupeKey).toBe(`line:${line.id}:4:0`);
    expect(m.faults.counts()).toMatchObject({ unappliedResults: 3, failSafeCooldowns: 1, last: { line: "free-a" } });
  });

  it("takes a line to cooldown when a suspect live judgment cannot be applied", () => {
    const m = machine(true);
    const live: HealthEvent = { type: "live", suspect: true, reason: "12 of 40 answers empty", probeIds: ["c1"] };
    const a = written(applyEvents(m, { line, policy, row: { health: initialHealth(NOW), revision: 0 }, events: [live], now: NOW }));
    expect(a.write.state).toBe("cooldown");
    const change = a.eventRows.find((r) => r.kind === "state_change");
    expect(change?.reason).toMatch(/^fail_safe: live evidence could not be applied \(12 of 40 answers empty\)/);
    expect(change?.data).toMatchObject({ probeIds: ["c1"] });
    expect(m.faults.counts().failSafeCooldowns).toBe(1);
  });

  it("writes nothing, and counts it, when what it cannot apply does not say the line fails", () => {
    for (const events of [[probe(true), probe(true)], [{ type: "tick" }], [{ type: "admin", adminState: "drained" }]] as HealthEvent[][]) {
      const m = machine(true);
      const a = applyEvents(m, { line, policy, row: { health: initialHealth(NOW), revision: 0 }, events, now: NOW });
      expect(a.ok).toBe(false);
      expect(m.faults.counts()).toMatchObject({ unappliedResults: events.length, failSafeCooldowns: 0 });
    }
  });

  it("counts a next tick that is not a time as a fault of the machine", () => {
    const m: HealthMachine = {
      ...machine(),
      transition: (h, e, p, now) => {
        const t = transition(h, e, p, now);
        return { ...t, health: { ...t.health, holdUntil: Number.NaN, factor: 0.5 } };
      },
    };
    const a = applyEvents(m, { line, policy, row: { health: initialHealth(NOW), revision: 0 }, events: [probe(true)], now: NOW });
    expect(a.ok).toBe(false);
    expect(m.faults.counts().unappliedResults).toBe(1);
  });
});
