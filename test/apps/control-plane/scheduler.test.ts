import { type Lab, startLab } from "@linewatch/lab";
import { afterEach, describe, expect, it } from "vitest";
import { createLine, createRoute, eventually } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { ManualClock } from "../../helpers/manual-clock";

let cp: TestControlPlane | undefined;
let lab: Lab | undefined;

afterEach(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
  cp = undefined;
  lab = undefined;
});

interface ResultRow {
  sample: string;
  startedAt: string;
  trigger: string;
}

async function results(lineId: string): Promise<ResultRow[]> {
  const h = (await (await cp!.request(`/v1/lines/${lineId}/health`)).json()) as {
    recent: ResultRow[];
    probing: { last24h: { probes: number } };
  };
  return h.recent;
}

describe("scheduler", () => {
  it("keeps a line with a daily quota within its probe budget over a simulated day", async () => {
    lab = await startLab({ lines: [{ name: "quota" }, { name: "free-run" }] });
    const clock = new ManualClock();
    cp = await startTestControlPlane({ clock });
    await createRoute(cp, "chat");
    // 2000 requests/day at 5% → at most 100 probes/day; 4 samples per cycle.
    const quota = await createLine(cp, {
      name: "quota",
      baseUrl: lab.baseUrl("quota"),
      routes: [{ route: "chat", weight: 1 }],
      dailyQuota: 2000,
      probeBudgetPct: 5,
    });
    const plain = await createLine(cp, {
      name: "plain",
      baseUrl: lab.baseUrl("free-run"),
      routes: [{ route: "chat", weight: 1 }],
      probeIntervalSec: 3600,
    });
    const engine = cp.engine;
    const start = clock.now();
    for (let t = 0; t <= 86_400_000; t += 5 * 60_000) {
      clock.set(start + t);
      await engine.tick();
      await engine.prober.drain();
    }
    const quotaStats = lab.stats("quota").requests;
    const plainStats = lab.stats("free-run").requests;
    expect(quotaStats).toBeLessThanOrEqual(100 + 4); // the cycle in flight when the day ends may straddle it
    expect(quotaStats).toBeGreaterThanOrEqual(90); // and it does use its budget
    expect(plainStats).toBeGreaterThanOrEqual(24 * 4 - 4);
    expect(plainStats).toBeLessThanOrEqual(25 * 4);
    const health = (await (await cp.request(`/v1/lines/${quota.id}/health`)).json()) as {
      probing: { probesPerDay: number; intervalSec: number };
    };
    expect(health.probing.probesPerDay).toBe(100);
    expect(health.probing.intervalSec).toBe((86_400 * 4) / 100);
    expect(plain.id).toBeTruthy();
  }, 180_000);

  it("never has more than N probes in flight, and hung upstreams do not delay other lines beyond their timeout", async () => {
    lab = await startLab({
      lines: [
        ...Array.from({ length: 2 }, (_, i) => ({ name: `hung-${i}`, mode: "hang" as const })),
        { name: "good-a" },
        { name: "good-b" },
      ],
    });
    cp = await startTestControlPlane({ env: { LINEWATCH_SCHEDULER: "true", LINEWATCH_MAX_IN_FLIGHT: "4" } });
    await createRoute(cp, "chat");
    const HUNG_TIMEOUT = 700;
    // Two hung lines keep about 1.4 of the 4 slots busy on average, more in bursts.
    for (let i = 0; i < 2; i++) {
      await createLine(cp, {
        name: `hung-${i}`,
        baseUrl: lab.baseUrl(`hung-${i}`),
        routes: [{ route: "chat", weight: 1 }],
        probeIntervalSec: 4,
        timeoutMs: HUNG_TIMEOUT,
      });
    }
    const good = await Promise.all(
      ["good-a", "good-b"].map((n) =>
        createLine(cp!, { name: n, baseUrl: lab!.baseUrl(n), routes: [{ route: "chat", weight: 1 }], probeIntervalSec: 2 }),
      ),
    );
    await cp.engine.prober.reconcile();
    // Each good line runs 4 samples every 2 s: after ~6 s each has had a few cycles.
    await eventually(async () => (await Promise.all(good.map((g) => results(g.id)))).every((r) => r.length >= 12), 20_000, 200);
    const stats = cp.engine.prober.stats();
    expect(stats.peakInFlight).toBeLessThanOrEqual(4);
    expect(stats.peakInFlight).toBeGreaterThanOrEqual(2); // the hung ones really held slots
    expect(lab.stats("hung-0").requests).toBeGreaterThan(0);
    // Spacing of a good line's probes of one sample: its interval, plus at most a hung timeout, a 1 s tick and slack for a busy host.
    for (const g of good) {
      const rows = (await results(g.id))
        .filter((r) => r.sample === "nonce-echo")
        .map((r) => Date.parse(r.startedAt))
        .sort();
      for (let i = 1; i < rows.length; i++) {
        expect(rows[i]! - rows[i - 1]!).toBeLessThanOrEqual(2_000 + HUNG_TIMEOUT + 4_000);
      }
    }
  }, 120_000);
});
