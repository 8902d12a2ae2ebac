// Issue 12, the control plane's side: POST /v1/outcomes (roles, bad input, idempotency), the live
// section of GET /v1/lines/:id/health, and a suspect verdict answered by an immediate probe and an
// event naming the live evidence — while the golden probes pass.
import type { LiveEvidence } from "@linewatch/core";
import { countLineOutcomes } from "@linewatch/db";
import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute, eventually } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { createTokens, expectEnvelope, type Tokens } from "./security/helpers";

let cp: TestControlPlane;
let lab: Lab;
let tokens: Tokens;
const ids = { bad: "", calm: "", other: "" };
const evidence: LiveEvidence[] = [];

const zero = { ok: 0, empty: 0, masked_error: 0, cut: 0, http_4xx: 0, http_5xx: 0, rate_limited: 0, timeout: 0, connect: 0 };
let windowSeq = 0;

function report(lines: { lineId: string; counts: Partial<typeof zero>; heldBack?: number }[], extra: Record<string, unknown> = {}) {
  const end = Date.now();
  return {
    routerId: "r-1",
    windowId: `w-${windowSeq++}`,
    windowStart: new Date(end - 5_000).toISOString(),
    windowEnd: new Date(end).toISOString(),
    lines: lines.map((l) => ({
      lineId: l.lineId,
      counts: { ...zero, ...l.counts },
      promptTokens: 1000,
      completionTokens: 500,
      latencyMsSum: 1234,
      ttfbMsSum: 321,
      ...(l.heldBack === undefined ? {} : { heldBack: l.heldBack }),
    })),
    ...extra,
  };
}

const push = (body: unknown, token: string | undefined = tokens.router) =>
  cp.request("/v1/outcomes", { method: "POST", json: body, ...(token ? { token } : {}) });

beforeAll(async () => {
  lab = await startLab({
    lines: [{ name: "bad", mode: { mode: "long-prompt", minPromptChars: 2000 } }, { name: "calm" }, { name: "other" }],
  });
  cp = await startTestControlPlane();
  await createRoute(cp, "chat");
  for (const name of ["bad", "calm", "other"] as const) {
    ids[name] = (await createLine(cp, { name, baseUrl: lab.baseUrl(name), routes: [{ route: "chat", weight: 1 }] })).id;
  }
  tokens = await createTokens(cp);
  // Record every judgment on its way into the health machine (the fusion stays in the loop).
  const fuse = cp.engine.onLiveEvidence;
  cp.engine.onLiveEvidence = async (lineId, e) => {
    evidence.push(e);
    await fuse(lineId, e);
  };
}, 60_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("POST /v1/outcomes: roles", () => {
  // No token at all is a 401 like on every /v1 operation (security/roles.test.ts walks them all).
  it("takes reports from router tokens only: viewer and admin get 403", async () => {
    const body = report([]);
    await expectEnvelope(await push(body, tokens.viewer), 403, "forbidden");
    await expectEnvelope(await push(body, tokens.admin), 403, "forbidden");
    const ok = await push(body);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ stored: 0, duplicate: false });
    expect(await countLineOutcomes(cp.database.db)).toBe(0);
  });
});

describe("POST /v1/outcomes: bad input is a 400 naming the field, and nothing is stored", () => {
  const cases: [string, () => unknown, string][] = [
    ["a count below 0", () => report([{ lineId: ids.calm, counts: { ok: -1 } }]), "lines.0.counts.ok"],
    ["a count out of range", () => report([{ lineId: ids.calm, counts: { empty: 10_000_001 } }]), "lines.0.counts.empty"],
    ["a fractional count", () => report([{ lineId: ids.calm, counts: { cut: 1.5 } }]), "lines.0.counts.cut"],
    [
      "an unknown outcome",
      () => ({ ...report([]), lines: [{ ...report([{ lineId: ids.calm, counts: {} }]).lines[0], counts: { ...zero, weird: 1 } }] }),
      "lines.0.counts.weird",
    ],
    [
      "an unknown line id",
      () =>
        report([
          { lineId: ids.calm, counts: { ok: 1 } },
          { lineId: "00000000-0000-4000-8000-000000000000", counts: { ok: 1 } },
        ]),
      "lines.1.lineId",
    ],
    ["a line id that is not a uuid", () => report([{ lineId: "calm", counts: { ok: 1 } }]), "lines.0.lineId"],
    [
      "a line listed twice",
      () =>
        report([
          { lineId: ids.calm, counts: { ok: 1 } },
          { lineId: ids.calm, counts: { ok: 1 } },
        ]),
      "lines.1.lineId",
    ],
    [
      "too many lines",
      () => ({ ...report([]), lines: Array.from({ length: 1001 }, () => report([{ lineId: ids.calm, counts: {} }]).lines[0]) }),
      "lines",
    ],
    ["no routerId", () => ({ ...report([{ lineId: ids.calm, counts: { ok: 1 } }]), routerId: undefined }), "routerId"],
    [
      "a window that ends before it starts",
      () => report([{ lineId: ids.calm, counts: { ok: 1 } }], { windowEnd: new Date(Date.now() - 60_000).toISOString() }),
      "windowEnd",
    ],
    [
      "a window from next week",
      () =>
        report([{ lineId: ids.calm, counts: { ok: 1 } }], {
          windowStart: new Date(Date.now() + 7 * 86_400_000).toISOString(),
          windowEnd: new Date(Date.now() + 7 * 86_400_000).toISOString(),
        }),
      "windowEnd",
    ],
    ["a field nobody knows", () => report([{ lineId: ids.calm, counts: { ok: 1 } }], { extra: 1 }), "extra"],
  ];
  it.each(cases)("%s", async (_name, body, field) => {
    const res = await push(body());
    const env = await expectEnvelope(res, 400, "invalid_request");
    expect(env.error.details.map((d) => (d as { field?: string }).field)).toContain(field);
    expect(await countLineOutcomes(cp.database.db)).toBe(0);
  });

  it("malformed JSON", async () => {
    const res = await cp.request("/v1/outcomes", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"routerId": "r-1", "lines": [',
      token: tokens.router,
    });
    await expectEnvelope(res, 400, "invalid_request");
    expect(await countLineOutcomes(cp.database.db)).toBe(0);
  });

  it("a body over 1 MiB is a 413", async () => {
    const res = await cp.request("/v1/outcomes", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...report([]), windowId: "x".repeat(1_100_000) }),
      token: tokens.router,
    });
    await expectEnvelope(res, 413, "payload_too_large");
    expect(await countLineOutcomes(cp.database.db)).toBe(0);
  });
});

describe("POST /v1/outcomes: storing and judging", () => {
  it("stores a window once: a retried push with the same router and window ids counts nothing twice", async () => {
    const body = report([{ lineId: ids.other, counts: { ok: 40, http_4xx: 2 } }]);
    const first = await push(body);
    expect(await first.json()).toEqual({ stored: 1, duplicate: false });
    const again = await push(body);
    expect(await again.json()).toEqual({ stored: 0, duplicate: true });
    expect(await countLineOutcomes(cp.database.db)).toBe(1);
    await cp.engine.live.settled();
    const metrics = await (await cp.request("/metrics")).text();
    expect(metrics).toMatch(/linewatch_live_requests_total\{line="other",outcome="ok"\} 40\n/);
    expect(metrics).toMatch(/linewatch_live_tokens_total\{line="other",direction="completion"\} 500\n/);
    expect(metrics).toMatch(/linewatch_live_success_rate\{line="other"\} 0\.95/);
    const health = (await (await cp.request(`/v1/lines/${ids.other}/health`, { token: tokens.viewer })).json()) as {
      live: { recent: { requests: number; counts: Record<string, number>; successRate: number; routers: string[] }; suspect: boolean };
    };
    expect(health.live.recent).toMatchObject({ requests: 42, routers: ["r-1"] });
    expect(health.live.recent.counts.http_4xx).toBe(2);
    expect(health.live.suspect).toBe(false);
  });

  it("what routers held back from a line by ejection is stored, summed over routers, shown and counted, apart from the answers", async () => {
    const negative = await push(report([{ lineId: ids.other, counts: { ok: 1 }, heldBack: -1 }]));
    expect(negative.status).toBe(400);
    expect(await negative.text()).toContain("lines.0.heldBack");
    // A window with nothing but held-back requests (the line was ejected throughout) is taken too.
    expect(await (await push(report([{ lineId: ids.other, counts: {}, heldBack: 7 }], { routerId: "r-2" }))).json()).toEqual({
      stored: 1,
      duplicate: false,
    });
    await push(report([{ lineId: ids.other, counts: { ok: 3 }, heldBack: 5 }], { routerId: "r-3" }));
    await cp.engine.live.settled();
    const health = (await (await cp.request(`/v1/lines/${ids.other}/health`, { token: tokens.viewer })).json()) as {
      live: { recent: { requests: number; heldBack: number; routers: string[] }; suspect: boolean; reason: string };
    };
    expect(health.live.recent.heldBack).toBe(12);
    expect(health.live.recent.requests).toBe(45);
    expect(health.live.recent.routers).toEqual(["r-1", "r-2", "r-3"]);
    expect(health.live.suspect).toBe(false);
    expect(health.live.reason).toContain("12 requests held back by ejection");
    const metrics = await (await cp.request("/metrics")).text();
    expect(metrics).toMatch(/linewatch_live_held_back_total\{line="other"\} 12\n/);
  });

  it("a healthy line's 1% of live 5xx is not suspect: no probe, no event", async () => {
    // In service first: a new line earns its weight through its first probes (docs/health.md#new-lines).
    const probed = await cp.request(`/v1/lines/${ids.calm}/probe`, { method: "POST", token: tokens.admin });
    expect(probed.status).toBe(200);
    const before = evidence.length;
    for (let i = 0; i < 5; i++) await push(report([{ lineId: ids.calm, counts: { ok: 99, http_5xx: 1 } }]));
    await cp.engine.live.settled();
    const calm = evidence.slice(before).filter((e) => e.lineId === ids.calm);
    expect(calm).toHaveLength(5);
    expect(calm.every((e) => !e.verdict.suspect && e.probes.length === 0)).toBe(true);
    const events = (await (await cp.request(`/v1/events?kind=live_evidence&line=${ids.calm}`, { token: tokens.viewer })).json()) as {
      events: unknown[];
    };
    expect(events.events).toHaveLength(0);
    // Counted as evidence all the same, and an ordinary live error rate moves nothing.
    const health = (await (await cp.request(`/v1/lines/${ids.calm}/health`, { token: tokens.viewer })).json()) as {
      state: string;
      weightFactor: number;
    };
    expect(health).toMatchObject({ state: "healthy", weightFactor: 1 });
  });

  it("empty answers above a few percent make the line suspect: it is probed at once, and the event names the evidence and the (passing) golden probes", async () => {
    const res = await push(report([{ lineId: ids.bad, counts: { ok: 70, empty: 30 } }], { routerId: "edge-7" }));
    expect(await res.json()).toEqual({ stored: 1, duplicate: false });
    const event = await eventually(async () => {
      const page = (await (await cp.request(`/v1/events?kind=live_evidence&line=${ids.bad}`, { token: tokens.viewer })).json()) as {
        events: {
          reason: string;
          data: {
            counts: Record<string, number>;
            routers: string[];
            probeIds: string[];
            probesFailed: number;
            window: { from: string; to: string };
          };
        }[];
      };
      return page.events[0];
    });
    expect(event.reason).toContain("30 empty");
    expect(event.reason).toContain("edge-7");
    expect(event.reason).toMatch(/over \d+ (s|min)/);
    expect(event.data.counts.empty).toBe(30);
    expect(event.data.routers).toEqual(["edge-7"]);
    // Every shipped sample that applies was sent, and the golden probes alone see nothing wrong.
    expect(event.data.probeIds.length).toBeGreaterThanOrEqual(3);
    expect(event.data.probesFailed).toBe(0);
    expect(event.reason).toContain("golden samples pass");
    await cp.engine.live.settled();
    const seam = evidence.filter((e) => e.lineId === ids.bad && e.verdict.suspect);
    expect(seam).toHaveLength(1);
    expect(seam[0]?.probes.map((p) => p.id).sort()).toEqual([...event.data.probeIds].sort());
    const health = (await (await cp.request(`/v1/lines/${ids.bad}/health`, { token: tokens.viewer })).json()) as {
      live: { suspect: boolean; reason: string; recent: { silentRate: number } };
    };
    expect(health.live.suspect).toBe(true);
    expect(health.live.recent.silentRate).toBeCloseTo(0.3);

    // The dashboard shows the live outcomes next to the probe scores: overview and line page.
    const cookie = { headers: { cookie: `lw_token=${tokens.viewer}` } };
    const overview = await (await cp.request("/", cookie)).text();
    expect(overview).toContain("live ok");
    expect(overview).toMatch(/70%<small class="muted"> of 100<\/small><b> suspect<\/b>/);
    const page = await (await cp.request(`/lines/${ids.bad}`, cookie)).text();
    expect(page).toContain("Live traffic");
    expect(page).toContain("70 ok · 30 empty");
  });
});
