// `npm start`'s demo with new lines earning their weight (docs/health.md#new-lines): before any probe
// the four lines are unprobed at the probation share and the table is normal; within the first probe
// round (one 15 s interval) each has passed every sample and carries its full share.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Demo, startDemo } from "../../../apps/control-plane/src/demo";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { ManualClock } from "../../helpers/manual-clock";

const clock = new ManualClock();
let cp: TestControlPlane;
let demo: Demo;

interface Table {
  mode: string;
  lines: { name: string; state: string; weight: number }[];
}
const table = async () => (await (await cp.request("/v1/tables/chat-default")).json()) as Table;

beforeAll(async () => {
  cp = await startTestControlPlane({ clock });
  demo = await startDemo(cp.engine.deps, cp.services, 0);
}, 60_000);

afterAll(async () => {
  await demo?.stop();
  await cp?.stop();
  await cp?.testDb.dispose();
});

describe("the demo's start", () => {
  it("is normal before any probe, and every line is in service at its full share within the first probe round", async () => {
    const first = await table();
    expect(first.mode).toBe("normal");
    expect(first.lines.map((l) => l.state)).toEqual(["unprobed", "unprobed", "unprobed", "unprobed"]);
    expect(first.lines.reduce((a, l) => a + l.weight, 0)).toBe(10_000);
    const start = clock.now();
    // The first probe round: the 15 s interval, a scheduler tick a second.
    for (let t = 0; t <= 15_000; t += 1_000) {
      clock.set(start + t);
      await cp.engine.tick();
      await cp.engine.prober.drain();
      expect((await table()).mode).toBe("normal");
    }
    await cp.engine.health.runTicks();
    const after = await table();
    expect(after.mode).toBe("normal");
    expect(Object.fromEntries(after.lines.map((l) => [l.name, l.state]))).toEqual({
      "paid-a": "healthy",
      "paid-b": "healthy",
      "free-a": "healthy",
      "free-b": "healthy",
    });
    // Full shares again: the paid lines by their base weights, the free ones within the route's free cap.
    expect(after.lines.reduce((a, l) => a + l.weight, 0)).toBe(10_000);
  }, 120_000);
});
