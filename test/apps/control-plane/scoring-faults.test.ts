import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LineHealth } from "../../../apps/cli/src/types";
import { bySample, createLine, createRoute, probeNow, type ResultView } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";

// docs/scoring.md against real lab upstreams: each fault lowers the component it should and leaves the others alone.
let cp: TestControlPlane;
let lab: Lab;
const MODES = ["ok", "truncate", "drop-fields", "stale", "downgrade", "slow", "errors", "rate-limit", "hang"] as const;
const ids: Record<string, string> = {};
const WARMUP = 6;

beforeAll(async () => {
  lab = await startLab({ lines: MODES.map((m) => ({ name: `lab-${m}`, baseLatencyMs: 40, latencyJitterMs: 10 })) });
  cp = await startTestControlPlane({ env: { LINEWATCH_MAX_IN_FLIGHT: "16" } });
  await createRoute(cp, "chat");
  await createRoute(cp, "latency");
  // A sample with a tight latency expectation, only on the route of the line that turns slow.
  const s = await cp.request("/v1/samples", {
    method: "POST",
    json: {
      name: "quick-echo",
      protocol: "openai-chat",
      routes: ["latency"],
      request: { messages: [{ role: "user", content: "Repeat this token: {{nonce}}" }] },
      expect: { nonce: true, maxLatencyMs: 300 },
    },
  });
  expect(s.status).toBe(201);
  for (const m of MODES) {
    const line = await createLine(cp, {
      name: `line-${m}`,
      baseUrl: lab.baseUrl(`lab-${m}`),
      routes: [{ route: m === "slow" ? "latency" : "chat", weight: 10 }],
      ...(m === "hang" ? { timeoutMs: 600 } : {}),
    });
    ids[m] = line.id;
  }
  // Warm baselines in mode ok, all lines side by side.
  for (let i = 0; i < WARMUP; i++) await Promise.all(MODES.map((m) => probeNow(cp, ids[m]!)));
}, 120_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

async function faultProbe(mode: (typeof MODES)[number], params: object = {}): Promise<ResultView[]> {
  if (mode !== "ok") lab.setMode(`lab-${mode}`, mode, params as never);
  return probeNow(cp, ids[mode]!);
}

const untouched = (r: ResultView, ...names: (keyof ResultView["components"])[]) => {
  for (const n of names) expect(r.components[n], `${r.sample} ${n}: ${r.reasons.join("; ")}`).toBeGreaterThanOrEqual(0.9);
};

describe("content faults lower their own component", () => {
  it("ok scores ≥ 90 on every shipped sample, with tokens recorded", async () => {
    const results = await faultProbe("ok");
    expect(results.map((r) => r.sample).sort()).toEqual(["json-fields", "long-explainer", "nonce-echo", "travel-minutes"]);
    for (const r of results) {
      expect(r.score, `${r.sample}: ${r.reasons.join("; ")}`).toBeGreaterThanOrEqual(90);
      expect(r.passed).toBe(true);
      expect(r.tokens).toBeGreaterThan(0);
    }
  });

  it("truncate → length (the explainer fails its probe)", async () => {
    const r = bySample(await faultProbe("truncate", { fraction: 0.3 }), "long-explainer");
    expect(r.components.length).toBeLessThan(0.5);
    expect(r.passed).toBe(false);
    expect(r.reasons.join(" ")).toMatch(/median|minLength|short|truncat/i);
    untouched(r, "status", "freshness");
  });

  it("drop-fields → fields", async () => {
    const r = bySample(await faultProbe("drop-fields"), "json-fields");
    expect(r.components.fields).toBeLessThan(0.7);
    expect(r.passed).toBe(false);
    expect(r.reasons.join(" ")).toMatch(/missing/i);
    untouched(r, "status", "freshness");
  });

  it("stale → freshness (nonce and varies)", async () => {
    const results = await faultProbe("stale");
    const echo = bySample(results, "nonce-echo");
    expect(echo.components.freshness).toBe(0);
    expect(echo.passed).toBe(false);
    untouched(echo, "status", "fields");
    // A cache replays the same content: after K=3 in a row the varies check trips as well.
    await faultProbe("stale");
    const third = bySample(await faultProbe("stale"), "nonce-echo");
    expect(third.reasons.join(" ")).toMatch(/same|stale|cache/i);
  });

  it("downgrade → freshness (answer) and length", async () => {
    const results = await faultProbe("downgrade");
    const travel = bySample(results, "travel-minutes");
    expect(travel.components.freshness).toBe(0);
    expect(travel.passed).toBe(false);
    untouched(travel, "status");
    const explainer = bySample(results, "long-explainer");
    expect(explainer.components.length).toBeLessThan(1);
  });

  it("slow → latency: a lower score, never a failed probe below the timeout (docs/scoring.md)", async () => {
    const r = bySample(await faultProbe("slow", { latencyMs: 700 }), "quick-echo");
    expect(r.components.latency).toBeLessThan(0.5);
    expect(r.score).toBeLessThan(100);
    expect(r.passed).toBe(true);
    expect(r.checks.every((c) => c.verdict === "pass")).toBe(true);
    untouched(r, "length", "fields", "freshness", "status");
  });
});

describe("hard failures score 0", () => {
  it.each([
    ["errors", { status: 503 }, "http_status", 503],
    ["rate-limit", {}, "http_status", 429],
    ["hang", {}, "timeout", null],
  ] as const)("%s → hard failure", async (mode, params, errorClass, status) => {
    const results = await faultProbe(mode, params);
    expect(results.length).toBe(4);
    for (const r of results) {
      expect(r).toMatchObject({ hardFailure: true, passed: false, score: 0, errorClass, status });
      expect(Object.values(r.components).every((c) => c === 0)).toBe(true);
      expect(r.reasons.length).toBeGreaterThan(0);
    }
  });
});

describe("GET /v1/lines/:id/health", () => {
  it("shows the score, averaged components, recent results and what probing costs", async () => {
    const res = await cp.request(`/v1/lines/${ids.ok}/health`);
    expect(res.status).toBe(200);
    const h = (await res.json()) as LineHealth;
    expect(h.score).toBeGreaterThanOrEqual(90);
    expect(Object.keys(h.components ?? {}).sort()).toEqual(["fields", "freshness", "latency", "length", "status"]);
    expect(h.recent.length).toBeGreaterThanOrEqual(Math.min(WARMUP * 4, 20));
    expect(h.recent[0]?.components).toBeDefined();
    expect(h.probing.samples.length).toBe(4);
    expect(h.probing.intervalSec).toBe(45);
    expect(h.probing.probesPerDay).toBe(Math.round((86400 / 45) * 4));
    expect(h.probing.last24h.probes).toBeGreaterThanOrEqual(WARMUP * 4);
    expect(h.probing.last24h.tokens).toBeGreaterThan(0);
    expect(h.probing.tokensPerDay).toBeGreaterThan(0);

    const bad = (await (await cp.request(`/v1/lines/${ids.errors}/health`)).json()) as LineHealth;
    expect(bad.score).toBeLessThan(h.score!);
    expect(bad.recent[0]?.hardFailure).toBe(true);
  });

  it("answers 404 for an unknown line", async () => {
    expect((await cp.request("/v1/lines/00000000-0000-4000-8000-000000000000/health")).status).toBe(404);
    expect((await cp.request("/v1/lines/00000000-0000-4000-8000-000000000000/probe", { method: "POST" })).status).toBe(404);
  });
});
