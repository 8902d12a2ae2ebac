import { describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY, type HealthPolicy } from "../../../../packages/core/src/health/index";
import {
  buildReport,
  PolicyReplay,
  parseReplayPolicy,
  probeEventOf,
  RecordedTimeline,
  type ReplayLine,
  type ReplayResult,
  recordedStart,
  rescore,
} from "../../../../packages/core/src/replay/index";

const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);
const MIN = 60_000;
const lines: ReplayLine[] = [
  { id: "a", name: "paid-a", tier: "paid", adminState: "active", maxShare: null, routes: [{ route: "chat", weight: 100 }] },
  { id: "b", name: "paid-b", tier: "paid", adminState: "active", maxShare: null, routes: [{ route: "chat", weight: 100 }] },
];
const routes = [{ name: "chat", freeShareCap: 0.2, onAllDown: "fail-open" as const }];
const policy = (over: Partial<HealthPolicy> = {}): HealthPolicy => ({ ...DEFAULT_HEALTH_POLICY, probationSteps: [0.2, 0.5], ...over });

let n = 0;
const result = (lineId: string, at: number, passed: boolean, latencyMs = 500, sampleId = "s1"): ReplayResult => ({
  id: `r${String(n++).padStart(4, "0")}`,
  lineId,
  sampleId,
  startedAt: at,
  latencyMs,
  // A failure is a failed content check (a cut answer): `failCount` of them in a row decide.
  score: passed ? 95 : 40,
  passed,
  hardFailure: false,
  components: null,
  failedCheck: !passed,
  contentLength: passed ? 100 : 30,
});

function run(results: ReplayResult[], over: Partial<HealthPolicy> = {}, to = T0 + 60 * MIN) {
  const replay = new PolicyReplay({
    from: T0,
    to,
    lines,
    routes,
    sampleWeights: new Map(),
    policies: new Map(lines.map((l) => [l.id, policy(over)])),
    scoring: null,
    keepPoints: () => true,
  });
  for (const r of results) replay.push(r);
  return replay.finish();
}

/** Line b probed every minute; fails from minute 10 to 14 (5 probes), passes otherwise. */
const history = (): ReplayResult[] => {
  n = 0;
  const out: ReplayResult[] = [];
  for (let m = 0; m < 60; m++) {
    out.push(result("a", T0 + m * MIN + 1_000, true));
    out.push(result("b", T0 + m * MIN + 2_000, !(m >= 10 && m <= 14)));
  }
  return out;
};

describe("PolicyReplay", () => {
  it("sends a line to cooldown at its failCount-th failed probe's end; 3 passes end it early", () => {
    const r = run(history());
    const b = r.summary.lines.get("b");
    // 2nd failure: minute 11, +2 s start, +0.5 s latency.
    expect(b?.cooldowns).toEqual([
      {
        at: T0 + 11 * MIN + 2_500,
        reason: "failure_evidence: content failures of sample s1: evidence 10.5 ≥ 9.2 at a usual rate of 0.5%: cooldown 5 min",
      },
    ]);
    // Failures at minutes 12–14 double the cooldown (to 40 min), but passes at 15, 16, 17 end it at the 3rd.
    expect(b?.zeroWeight).toEqual([
      { from: T0 + 11 * MIN + 2_500, to: T0 + 17 * MIN + 2_500, reason: expect.stringMatching(/^failure_evidence/) },
    ]);
    const points = r.summary.points.get("b") ?? [];
    expect(points.find((p) => p.state === "probation")?.at).toBe(T0 + 17 * MIN + 2_500);
    // b's weight to 0, then 20% (the 3 min anti-flap hold is long over), 50%, 100%: four new table versions.
    expect(r.summary.routes.get("chat")?.versions).toBe(4);
    expect(r.badEpisodes).toEqual([{ lineId: "b", from: T0 + 10 * MIN + 2_000, to: T0 + 14 * MIN + 2_500, failedProbes: 5 }]);
  });

  it("a tick ends a cooldown at its exact end even between probes", () => {
    n = 0;
    const out: ReplayResult[] = [];
    for (let m = 0; m < 30; m++) out.push(result("b", T0 + m * MIN, !(m === 3 || m === 4)));
    const r = run(out, { cooldownBaseMs: 90_000, passCount: 100 });
    const points = r.summary.points.get("b") ?? [];
    const down = points.find((p) => p.state === "cooldown");
    const back = points.find((p) => p.state === "probation");
    expect(down?.at).toBe(T0 + 4 * MIN + 500);
    expect(back?.at).toBe(T0 + 4 * MIN + 500 + 90_000);
    expect(back?.factor).toBe(0); // the anti-flap hold keeps the weight at 0 …
    expect(points.find((p) => p.state === "probation" && p.factor === 0.2)?.at).toBe(T0 + 4 * MIN + 500 + 3 * MIN); // … for 3 min
  });

  it("applies results in the order they finished: a slow failure lands after a quick pass that started later", () => {
    n = 0;
    // Three samples. Finish order: fail (1:01.1), pass (1:02.1), fail (1:09): never two failures in a row.
    const slowFail = [
      result("b", T0 + MIN, false, 9_000),
      result("b", T0 + MIN + 1_000, false, 100, "s3"),
      result("b", T0 + MIN + 2_000, true, 100, "s2"),
    ];
    expect(run(slowFail).summary.lines.get("b")?.cooldowns).toEqual([]);
    // The same starts, the pass slow instead: two failures in a row, cooldown at the second's end.
    const slowPass = [
      result("b", T0 + MIN, false, 100),
      result("b", T0 + MIN + 1_000, false, 100, "s3"),
      result("b", T0 + MIN + 2_000, true, 9_000, "s2"),
    ];
    expect(
      run(slowPass)
        .summary.lines.get("b")
        ?.cooldowns.map((c) => c.at),
    ).toEqual([T0 + MIN + 1_100]);
  });

  it("a stricter policy goes down earlier and carries less of the bad episode; the report says so, byte for byte the same twice", () => {
    const actual = run(history());
    const strict = run(history(), { failCount: 1 });
    const recorded = new RecordedTimeline({ from: T0, to: T0 + 60 * MIN }, lines, routes, recordedStart([], lines), () => true);
    // The recorded side, as events: what the default policy did (taken from its replay).
    for (const p of actual.summary.points.get("b") ?? []) {
      recorded.push({ at: p.at, kind: "state_change", lineId: "b", routeName: null, reason: "r", data: { to: p.state } });
      recorded.push({ at: p.at, kind: "weight_change", lineId: "b", routeName: null, reason: "r", data: { to: p.factor } });
    }
    const report = () =>
      buildReport({
        from: T0,
        to: T0 + 60 * MIN,
        lines,
        routes,
        proposed: strict,
        actual: recorded.finish(),
        policy: { failCount: 1 },
        notes: [],
      });
    const r = report();
    expect(r.episodes).toHaveLength(1);
    expect(r.episodes[0]).toMatchObject({
      line: "paid-b",
      change: "earlier",
      bySeconds: -60,
      actual: { downAt: new Date(T0 + 11 * MIN + 2_500).toISOString() },
      proposed: { downAt: new Date(T0 + 10 * MIN + 2_500).toISOString() },
    });
    expect(JSON.stringify(report())).toBe(JSON.stringify(r));
  });
});

describe("the stored relay evidence (docs/replay.md#what-a-replay-cannot-know)", () => {
  /** Line b answers a fingerprint sample every minute, passing: "dolphin" for 30 minutes, then "owl" (3 of 7 characters). */
  const answers = (relay: boolean): ReplayResult[] => {
    n = 0;
    const out: ReplayResult[] = [];
    for (let m = 0; m < 60; m++) {
      out.push(result("a", T0 + m * MIN + 1_000, true));
      const word = m < 30 ? "dolphin" : "owl";
      const fingerprint = { variant: "v1", answer: word, own: 0, peers: null, threshold: 17.46 };
      out.push({
        ...result("b", T0 + m * MIN + 2_000, true, 500, "fp-animal"),
        contentLength: word.length,
        ...(relay ? { fingerprint } : {}),
      });
    }
    return out;
  };

  it("a fingerprint answer teaches no length anchor: a shorter word is not a shorter answer, as live", () => {
    // Read without its relay record, "owl" after "dolphin" is an answer at 43% of its usual length.
    expect(run(answers(false)).summary.lines.get("b")?.stateMs.degraded ?? 0).toBeGreaterThan(0);
    const b = run(answers(true)).summary.lines.get("b");
    expect(b?.stateMs.degraded ?? 0).toBe(0);
    expect(b?.cooldowns).toEqual([]);
  });

  it("the health event carries the fingerprint evidence the machine steps; a result without it carries none", () => {
    const fingerprint = { variant: "v1", answer: "owl", own: 1.4, peers: 1.4, threshold: 17.46 };
    const e = probeEventOf({ ...result("b", T0, false, 500, "fp-animal"), fingerprint }, 40);
    expect(e.type === "probe" && e.result.fingerprint).toEqual(fingerprint);
    const plain = probeEventOf(result("b", T0, false), 40);
    expect(plain.type === "probe" && "fingerprint" in plain.result).toBe(false);
  });
});

describe("parseReplayPolicy", () => {
  it.each([
    [{ failCountt: 1 }, "policy.failCountt"],
    [{ failCount: 0 }, "policy.failCount"],
    [{ cooldownBaseMs: 7_200_000 }, "policy.cooldownMaxMs"],
    [{ freeShareCap: 0.5 }, "policy.freeShareCap"],
    [{ weights: { speed: 1 } }, "policy.weights.speed"],
    [{ weights: { length: 0, fields: 0, freshness: 0, status: 0, latency: 0 } }, "policy.weights"],
    [{ passScore: -1 }, "policy.passScore"],
    [[1], "policy"],
  ])("%j → a problem naming %s", (input, field) => {
    const parsed = parseReplayPolicy(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.map((p) => p.field)).toContain(field);
  });

  it("takes a route's fields and a scoring", () => {
    const parsed = parseReplayPolicy({ failCount: 3, reprobeDelayMs: null, weights: { latency: 40 }, passScore: 70 });
    expect(parsed).toEqual({
      ok: true,
      value: {
        overrides: { failCount: 3, reprobeDelayMs: null },
        scoring: { weights: { length: 25, fields: 20, freshness: 20, status: 20, latency: 40 }, passScore: 70 },
      },
    });
    expect(parseReplayPolicy(undefined)).toEqual({ ok: true, value: { overrides: {}, scoring: null } });
  });
});

describe("rescore and probeEventOf", () => {
  const slow: ReplayResult = {
    id: "x",
    lineId: "a",
    sampleId: "s",
    startedAt: T0,
    latencyMs: 9_000,
    score: 88,
    passed: true,
    hardFailure: false,
    components: { length: 1, fields: 1, freshness: 1, status: 1, latency: 0.2 },
    failedCheck: false,
    contentLength: 100,
  };

  it("re-weighs the stored components and applies the new pass score; a hard failure stays one", () => {
    expect(rescore(slow, null)).toBe(slow);
    // latency 0.2 weighted 100 of 185: (25 + 20 + 20 + 20 + 100 × 0.2) / 185 = 56.8
    expect(rescore(slow, { weights: { length: 25, fields: 20, freshness: 20, status: 20, latency: 100 }, passScore: 60 })).toMatchObject({
      score: 56.8,
      passed: false,
    });
    expect(rescore(slow, { weights: { length: 25, fields: 20, freshness: 20, status: 20, latency: 15 }, passScore: 90 }).passed).toBe(
      false,
    );
    const hard = { ...slow, hardFailure: true, passed: false, score: 0 };
    expect(rescore(hard, { weights: { length: 1, fields: 0, freshness: 0, status: 0, latency: 0 }, passScore: 0 })).toBe(hard);
  });

  it("maps a stored result to the health machine's probe event", () => {
    expect(probeEventOf(slow, 71.5)).toEqual({
      type: "probe",
      result: { id: "x", sampleId: "s", score: 88, passed: true, hardFailure: false, startedAt: T0, contentLength: 100 },
      lineScore: 71.5,
    });
    expect(probeEventOf(slow, 71.5, 30_000)).toMatchObject({ intervalMs: 30_000 });
  });
});
