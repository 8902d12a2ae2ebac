// Issue 27 item 1 end to end, in real time: a router's own protection must not starve the evidence
// the control plane needs. A fake-200 line (golden samples answered perfectly, every long real prompt
// an empty 200) behind real routers on default settings — which eject it after 3 failures and let
// about one request through every 5 s — reaches weight 0 within 30 s at 10 requests/s and within
// 60 s at 1 request/s, with one router and with two, and the live_evidence event names what ejection
// held back. A line with 1% random 5xx never leaves the table. The four fake-200 cases and the 1%
// case each have their own route and lines, and run side by side.
import { type Lab, startLab } from "@linewatch/lab";
import { type RunningRouter, startRouter } from "@linewatch/router";
import { silentLogger } from "@linewatch/router-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokens, type Tokens } from "../apps/control-plane/security/helpers";
import { createLine, createRoute, eventually } from "../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../helpers/control-plane";

let cp: TestControlPlane;
let lab: Lab;
let tokens: Tokens;
const routers: RunningRouter[] = [];
const ids = new Map<string, string>();

const CASES = [
  { route: "fake-10-one", rate: 10, routers: 1, withinMs: 30_000 },
  { route: "fake-1-one", rate: 1, routers: 1, withinMs: 60_000 },
  { route: "fake-10-two", rate: 10, routers: 2, withinMs: 30_000 },
  { route: "fake-1-two", rate: 1, routers: 2, withinMs: 60_000 },
] as const;
const STEADY = { route: "steady", rate: 10, ms: 150_000 };
const LONG = "Please summarise the following report in two sentences. ".repeat(40);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  lab = await startLab({
    lines: [
      ...CASES.flatMap((c) => [
        { name: `${c.route}-bad`, mode: { mode: "long-prompt" as const, minPromptChars: 1500 } },
        { name: `${c.route}-good` },
      ]),
      { name: "steady-noisy", mode: { mode: "errors" as const, status: 500, rate: 0.01 } },
      { name: "steady-good" },
    ],
  });
  cp = await startTestControlPlane();
  const pairs: [string, string[]][] = [
    ...CASES.map((c) => [c.route, [`${c.route}-bad`, `${c.route}-good`]] as [string, string[]]),
    ["steady", ["steady-noisy", "steady-good"]],
  ];
  for (const [route, names] of pairs) {
    await createRoute(cp, route);
    for (const name of names) {
      ids.set(name, (await createLine(cp, { name, baseUrl: lab.baseUrl(name), routes: [{ route, weight: 1 }] })).id);
    }
  }
  tokens = await createTokens(cp);
}, 60_000);

afterAll(async () => {
  for (const r of routers) await r.close();
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

/** Routers on default settings (ejection after 3 failures, reports every 5 s, the 20% retry budget). */
async function startRouters(route: string, n: number): Promise<RunningRouter[]> {
  const started: RunningRouter[] = [];
  for (let i = 0; i < n; i++) {
    const r = await startRouter({
      controlPlaneUrl: cp.url,
      token: tokens.router,
      routes: [route],
      port: 0,
      cacheFile: null,
      logger: silentLogger,
      processMetrics: false,
      routerId: `${route}-edge-${i + 1}`,
    });
    routers.push(r);
    started.push(r);
  }
  for (const r of started) await eventually(async () => r.client.ready(), 20_000);
  return started;
}

async function weightOf(route: string, lineId: string): Promise<number> {
  const t = (await (await cp.request(`/v1/tables/${route}`, { token: tokens.viewer })).json()) as {
    lines: { id: string; weight: number }[];
  };
  return t.lines.find((l) => l.id === lineId)?.weight ?? 0;
}

/**
 * Client traffic at `rate` requests/s spread over the routers, until `done` says so or `maxMs` passed.
 * Every answer must be a good 200 (in-band failover hides the fake line from clients).
 */
async function drive(rs: RunningRouter[], route: string, rate: number, maxMs: number, done: () => Promise<boolean>) {
  const started = Date.now();
  const inFlight = new Set<Promise<void>>();
  const bad: string[] = [];
  let sent = 0;
  let stop = false;
  const checker = (async () => {
    while (!stop && Date.now() - started < maxMs) {
      if (await done()) stop = true;
      else await sleep(250);
    }
  })();
  while (!stop && Date.now() - started < maxMs) {
    const router = rs[sent % rs.length] as RunningRouter;
    sent += 1;
    const p = (async () => {
      const res = await fetch(`${router.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: route, messages: [{ role: "user", content: LONG }] }),
      });
      const text = await res.text();
      const content =
        res.status === 200 ? (JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0]?.message.content : "";
      if (!content) bad.push(`${res.status} ${text.slice(0, 120)}`);
    })();
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    // Paced by the clock, not by the answers: a slow answer does not slow the traffic.
    const next = started + (sent * 1000) / rate;
    await sleep(Math.max(0, next - Date.now()));
  }
  stop = true;
  await checker;
  await Promise.all([...inFlight]);
  return { sent, bad, ms: Date.now() - started };
}

interface EventPage {
  events: { at: string; reason: string; data: Record<string, unknown> }[];
}

describe.concurrent("what a router held back from a failing line still reaches the control plane", () => {
  it.each(CASES)(
    "a fake-200 line at $rate req/s through $routers router(s) reaches weight 0 within $withinMs ms; the event names what was held back",
    async ({ route, rate, routers: n, withinMs }) => {
      const bad = ids.get(`${route}-bad`) as string;
      const rs = await startRouters(route, n);
      expect(await weightOf(route, bad)).toBeGreaterThan(0);
      const run = await drive(rs, route, rate, withinMs, async () => (await weightOf(route, bad)) === 0);
      // Clients never saw the empty answers.
      expect(run.bad).toEqual([]);
      expect(await weightOf(route, bad), `weight of the fake line after ${run.ms} ms and ${run.sent} requests`).toBe(0);
      const events = (await (await cp.request(`/v1/events?kind=live_evidence&line=${bad}`, { token: tokens.viewer })).json()) as EventPage;
      expect(events.events.length).toBeGreaterThan(0);
      const names = rs.map((_, i) => `${route}-edge-${i + 1}`);
      for (const e of events.events) {
        expect(e.reason).toMatch(/all \d+ answers failed \(\d+ empty\)/);
        expect(e.reason).toMatch(/the golden samples pass; live traffic disagrees/);
        expect(e.data.signal).toBe("failing");
        // What ejection held back is named whenever there was any (data.heldBack), and only then.
        expect(/; \d+ requests? held back by ejection/.test(e.reason)).toBe((e.data.heldBack as number) > 0);
        // Each router's reports about the line add up in one judgment.
        const from = e.data.routers as string[];
        expect(from.length).toBeGreaterThan(0);
        for (const name of from) expect(names).toContain(name);
      }
      const changes = (await (await cp.request(`/v1/events?kind=state_change&line=${bad}`, { token: tokens.viewer })).json()) as EventPage;
      const out = changes.events.find((e) => e.data.to === "cooldown");
      expect(out?.reason).toMatch(/^live_evidence: live traffic: all \d+ answers failed/);
      // The routers count what they held back, by line; at 10 req/s ejection always held some back
      // before the verdict, and one router's first verdict (after its 5th failure, ~10 s in) names it.
      let held = 0;
      for (const r of rs) {
        const text = await (await fetch(`${r.url}/metrics`)).text();
        held += Number(
          new RegExp(`linewatch_router_held_back_total\\{route="${route}",line="${route}-bad"\\} (\\d+)`).exec(text)?.[1] ?? 0,
        );
      }
      if (rate >= 10) expect(held).toBeGreaterThan(0);
      if (rate >= 10 && n === 1) expect(events.events.at(-1)?.reason).toMatch(/; \d+ requests held back by ejection/);
      // The good line kept its place.
      expect(await weightOf(route, ids.get(`${route}-good`) as string)).toBe(10_000);
    },
    120_000,
  );

  it(
    "a line with 1% random 5xx never leaves the table under minutes of live traffic",
    async () => {
      const noisy = ids.get("steady-noisy") as string;
      const rs = await startRouters(STEADY.route, 1);
      const initial = await weightOf(STEADY.route, noisy);
      expect(initial).toBeGreaterThan(0);
      let lowest = initial;
      const run = await drive(rs, STEADY.route, STEADY.rate, STEADY.ms, async () => {
        lowest = Math.min(lowest, await weightOf(STEADY.route, noisy));
        return false;
      });
      expect(run.sent).toBeGreaterThan(1000);
      expect(lowest).toBe(initial);
      const events = (await (
        await cp.request(`/v1/events?kind=live_evidence&line=${noisy}`, { token: tokens.viewer })
      ).json()) as EventPage;
      expect(events.events).toEqual([]);
      // It did fail now and then: its errors were reported, and judged ordinary.
      const health = (await (await cp.request(`/v1/lines/${noisy}/health`, { token: tokens.viewer })).json()) as {
        live: { recent: { requests: number; counts: Record<string, number> }; suspect: boolean };
      };
      expect(health.live.recent.requests).toBeGreaterThan(300);
      expect(health.live.suspect).toBe(false);
    },
    STEADY.ms + 60_000,
  );
});
