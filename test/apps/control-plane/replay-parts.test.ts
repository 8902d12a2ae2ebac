import { DEFAULT_HEALTH_POLICY, mulberry32, partitionReplay, type ReplayLine } from "@linewatch/core";
import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReplayParts } from "../../../apps/control-plane/src/replay/replay-parts";
import { runReplay } from "../../../apps/control-plane/src/replay/run-replay";
import { createLine, createRoute } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { type FaultWindow, recordHistory } from "../../helpers/history";
import { ManualClock } from "../../helpers/manual-clock";

// A replay in parts (worker threads) must give the report a single replay gives, byte for byte.
// The history: five lines on three routes, where `both` joins routes b and c, so the parts are
// {a} and {b, c} (lines that share a route, even through another line, stay in one part). Probed by
// the real prober against the lab under a manual clock, with fault windows on lines of each part.
const MIN = 60_000;
const STEP = 20_000;
const SPAN = 40 * MIN;
/** [line, mode, from min, to min] */
const FAULTS = [
  ["a1", "errors", 5, 14],
  ["b1", "truncate", 10, 18],
  ["both", "errors", 22, 30],
] as const satisfies readonly FaultWindow[];
const LINES = [
  ["a1", ["a"]],
  ["a2", ["a"]],
  ["b1", ["b"]],
  ["both", ["b", "c"]],
  ["c1", ["c"]],
] as const;

let cp: TestControlPlane;
let lab: Lab;
let from: number;
let to: number;

beforeAll(async () => {
  lab = await startLab({ lines: LINES.map(([name]) => ({ name })) });
  const clock = new ManualClock();
  cp = await startTestControlPlane({ clock, rng: mulberry32(29) });
  for (const route of ["a", "b", "c"]) await createRoute(cp, route);
  for (const [name, routes] of LINES)
    await createLine(cp, {
      name,
      baseUrl: lab.baseUrl(name),
      routes: routes.map((route) => ({ route, weight: 100 })),
      probeIntervalSec: 60,
    });
  ({ from, to } = await recordHistory(cp, lab, clock, { spanMs: SPAN, stepMs: STEP, faults: FAULTS }));
}, 120_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("a policy replay in parts (worker threads)", () => {
  it("gives the single replay's report byte for byte, with and without re-scoring, streamed or paged", async () => {
    const snapshot = await cp.engine.registry.get();
    const range = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
    const cases = [
      [null, "both"],
      [{ failCount: 1, cooldownBaseMs: 120_000 }, "a1"],
      [{ weights: { latency: 3 }, passScore: 80 }, "both"],
    ] as const;
    for (const [policy, timeline] of cases) {
      const req = { ...range, timeline, policy };
      const single = JSON.stringify(await runReplay(cp.engine.deps, snapshot, req, { workers: 1 }));
      const parted = JSON.stringify(await runReplay(cp.engine.deps, snapshot, req, { workers: 2, partsFrom: 0 }));
      const paged = JSON.stringify(await runReplay(cp.engine.deps, snapshot, req, { workers: 3, partsFrom: 0, pageSize: 53 }));
      expect(parted).toBe(single);
      expect(paged).toBe(single);
    }
    // The history has something to tell apart: cooldowns in both parts, and the shared line's routes both reported.
    const report = await runReplay(cp.engine.deps, snapshot, { ...range, policy: { failCount: 1 } }, { workers: 2, partsFrom: 0 });
    const cooled = report.lines.filter((l) => l.proposed.cooldowns.length > 0).map((l) => l.name);
    expect(cooled).toEqual(expect.arrayContaining(["a1", "both"]));
    expect(report.routes.map((r) => r.name)).toEqual(["a", "b", "c"]);
    expect(report.results).toBeGreaterThan(100);
  }, 120_000);

  it("replays only the lines asked for and their routes' lines, and reports progress to the last row", async () => {
    const snapshot = await cp.engine.registry.get();
    const req = { from: new Date(from).toISOString(), to: new Date(to).toISOString(), lines: ["b1", "a1"] };
    const seen: number[] = [];
    const parted = await runReplay(cp.engine.deps, snapshot, req, {
      workers: 2,
      partsFrom: 0,
      onProgress: (p) => seen.push(p.done),
    });
    const single = await runReplay(cp.engine.deps, snapshot, req, { workers: 1 });
    expect(JSON.stringify(parted)).toBe(JSON.stringify(single));
    // Replayed in two parts (a1 with a2; b1 with `both`), reported for the lines asked for.
    expect(parted.lines.map((l) => l.name)).toEqual(["a1", "b1"]);
    expect(seen.at(-1)).toBe(parted.results);
  }, 60_000);

  it("stops its workers when its signal aborts", async () => {
    const snapshot = await cp.engine.registry.get();
    const ac = new AbortController();
    const run = runReplay(
      cp.engine.deps,
      snapshot,
      { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
      {
        workers: 2,
        partsFrom: 0,
        pageSize: 50,
        signal: ac.signal,
        onProgress: (p) => {
          if (p.done >= 100) ac.abort();
        },
      },
    );
    await expect(run).rejects.toThrow(/abort/i);
    // The next replay in parts runs as before.
    const again = await runReplay(
      cp.engine.deps,
      snapshot,
      { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
      { workers: 2, partsFrom: 0 },
    );
    expect(again.results).toBeGreaterThan(100);
  }, 60_000);

  it("a part that fails rejects the replay with its error, and the process goes on", async () => {
    const line = (id: string, route: string): ReplayLine => ({
      id,
      name: id,
      tier: "paid",
      adminState: "active",
      maxShare: null,
      routes: [{ route, weight: 100 }],
    });
    const lines = [line("00000000-0000-4000-8000-000000000001", "x"), line("00000000-0000-4000-8000-000000000002", "y")];
    const parts = partitionReplay(
      lines,
      [
        { name: "x", freeShareCap: 0.2, onAllDown: "fail-open" },
        { name: "y", freeShareCap: 0.2, onAllDown: "fail-open" },
      ],
      2,
    );
    expect(parts).toHaveLength(2);
    // The second line has no policy: its part cannot start its replay.
    const parted = startReplayParts(parts, {
      from: 0,
      to: 3_600_000,
      sampleWeights: new Map(),
      policies: new Map([[lines[0]?.id ?? "", DEFAULT_HEALTH_POLICY]]),
      scoring: null,
      rescoring: false,
      timelineLine: null,
    });
    try {
      await expect(parted.finish()).rejects.toThrow(/no policy for line 00000000-0000-4000-8000-000000000002/);
    } finally {
      await parted.stop();
    }
    expect((await cp.request("/healthz")).status).toBe(200);
  }, 60_000);
});
