import { transition } from "@linewatch/core";
import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute, probeNow } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";

// Issue 15 item 2: a result the health machine cannot apply must never leave a failing line at full
// weight. The fault is injected into core's transition (the one seam the shell calls), for one line.
let cp: TestControlPlane;
let lab: Lab;
let broken: { id: string; name: string };
let other: { id: string; name: string };

interface Readyz {
  status: string;
  health: { unappliedResults: number; failSafeCooldowns: number; last: { line: string; error: string } | null };
}
const readyz = async () => (await (await cp.request("/readyz")).json()) as Readyz;
const health = async (id: string) =>
  (await (await cp.request(`/v1/lines/${id}/health`)).json()) as { state: string; weightFactor: number; reason?: string };
const tableWeight = async (name: string) => {
  const table = (await (await cp.request("/v1/tables/chat")).json()) as { lines: { name: string; weight: number }[] };
  // A line at weight 0 is left out of the table.
  return table.lines.find((l) => l.name === name)?.weight ?? 0;
};
const metric = async (name: string) => {
  const text = await (await cp.request("/metrics")).text();
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
};

beforeAll(async () => {
  lab = await startLab({
    lines: [
      { name: "broken", baseLatencyMs: 2 },
      { name: "other", baseLatencyMs: 2 },
    ],
  });
  cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" } });
  await createRoute(cp, "chat");
  const res = await cp.request("/v1/samples", {
    method: "POST",
    json: {
      name: "hello",
      protocol: "openai-chat",
      routes: ["chat"],
      request: { messages: [{ role: "user", content: "hi" }] },
      expect: { minLength: 1 },
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  broken = await createLine(cp, { name: "broken", baseUrl: lab.baseUrl("broken"), routes: [{ route: "chat", weight: 100 }] });
  other = await createLine(cp, { name: "other", baseUrl: lab.baseUrl("other"), routes: [{ route: "chat", weight: 100 }] });
  for (const id of [broken.id, other.id]) await probeNow(cp, id);
  const health = cp.engine.health;
  health.transition = (h, event, policy, now) => {
    // The shell hands core the stored result, which names its line.
    if (event.type === "probe" && (event.result as { lineId?: string }).lineId === broken.id) throw new RangeError("injected fault");
    return transition(h, event, policy, now);
  };
}, 60_000);

const probe = (id: string) => probeNow(cp, id);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("the health fail-safe", () => {
  it("counts a passing result it cannot apply and leaves the line as it was", async () => {
    expect(await readyz()).toMatchObject({ status: "ready", health: { unappliedResults: 0, failSafeCooldowns: 0, last: null } });
    expect(await tableWeight("broken")).toBeGreaterThan(0);
    await probe(broken.id);
    await probe(broken.id);
    expect(await health(broken.id)).toMatchObject({ state: "healthy", weightFactor: 1 });
    const ready = await readyz();
    expect(ready.health.unappliedResults).toBeGreaterThanOrEqual(1);
    expect(ready.health).toMatchObject({ failSafeCooldowns: 0, last: { line: "broken", error: expect.stringMatching(/injected fault/) } });
  });

  it("takes a line whose failing result it cannot apply out of the table, says so, and spares the others", async () => {
    const before = (await readyz()).health.unappliedResults;
    lab.setMode("broken", "errors", { status: 502 });
    lab.setMode("other", "errors", { status: 502 });
    const [failed] = await probe(broken.id);
    await probe(other.id);
    expect(failed?.passed).toBe(false);
    // The fault: the line goes to cooldown (weight 0) rather than staying healthy at full weight.
    expect(await health(broken.id)).toMatchObject({ state: "cooldown", weightFactor: 0 });
    expect(await tableWeight("broken")).toBe(0);
    // The other line's failure went through the ordinary machine: one hard failure grades it down
    // by its line score, it does not cool it down.
    expect((await health(other.id)).state).toMatch(/^(healthy|degraded)$/);
    expect(await tableWeight("other")).toBeGreaterThan(0);
    const ready = await readyz();
    expect(ready.health.unappliedResults).toBe(before + 1);
    expect(ready.health.failSafeCooldowns).toBe(1);
    expect(await metric("linewatch_health_fail_safe_total")).toBe(1);
    expect(await metric("linewatch_health_unapplied_results_total")).toBe(before + 1);
    const events = (await (await cp.request(`/v1/events?line=${broken.id}`)).json()) as {
      events: { kind: string; reason: string; data: { to: unknown; probeIds: string[] } }[];
    };
    const change = events.events.find((e) => e.kind === "state_change" && e.data.to === "cooldown");
    expect(change?.reason).toMatch(/^fail_safe: 1 failing result\(s\) could not be applied/);
    expect(change?.data.probeIds).toEqual([failed?.id]);
  });

  it("lets the line come back the ordinary way once its results apply again", async () => {
    lab.setMode("broken", "ok");
    cp.engine.health.transition = transition;
    const passes = 3;
    for (let i = 0; i < passes; i++) await probe(broken.id);
    // passCount (3) passes end a first cooldown early: probation, weight above 0 again.
    const h = await health(broken.id);
    expect(h.state).toBe("probation");
    expect(h.weightFactor).toBeGreaterThan(0);
  });
});
