import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute, probeNow } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { ManualClock } from "../../helpers/manual-clock";

// Issue 7: probe results older than LINEWATCH_RETENTION_DAYS are deleted in small batches.
let cp: TestControlPlane;
let lab: Lab;
const clock = new ManualClock();

beforeAll(async () => {
  lab = await startLab({ lines: [{ name: "kept" }] });
  cp = await startTestControlPlane({ clock, env: { LINEWATCH_RETENTION_DAYS: "2" } });
  await createRoute(cp, "chat");
}, 60_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("retention", () => {
  it("deletes results older than the retention age, in batches, and keeps the rest", async () => {
    const line = await createLine(cp, { name: "kept", baseUrl: lab.baseUrl("kept"), routes: [{ route: "chat", weight: 1 }] });
    for (let i = 0; i < 3; i++) await probeNow(cp, line.id); // 12 results, 3 days old by the end …
    clock.advance(2 * 24 * 3_600_000);
    for (let i = 0; i < 2; i++) await probeNow(cp, line.id); // … 8 results, 1 day old …
    clock.advance(25 * 3_600_000);
    await probeNow(cp, line.id); // … and 4 fresh ones.
    const count = async () =>
      ((await (await cp.request(`/v1/lines/${line.id}/health`)).json()) as { probing: { last24h: { probes: number } } }).probing.last24h
        .probes;
    expect(await count()).toBe(4);

    // Batches of 5: the 12 old results go in three batches; the 8 + 4 younger than 2 days stay.
    const deleted = await cp.engine.pruneProbeResults(5);
    expect(deleted).toBe(12);
    expect(await cp.engine.pruneProbeResults(5)).toBe(0);
    const recent = ((await (await cp.request(`/v1/lines/${line.id}/health`)).json()) as { recent: unknown[] }).recent;
    expect(recent.length).toBe(12);
  });
});
