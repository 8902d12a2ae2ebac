// Issue 12 end to end, in real time: a line that answers the golden samples well but gives empty
// answers to long prompts. Clients going through a real router never see an empty answer (in-band
// failover), the router's outcome reports make the control plane suspect the line, probe it at
// once and record a live_evidence event naming the evidence — and the golden probes pass, so they
// alone would never have caught it. Live evidence alone takes the line to weight 0.
import { type Lab, startLab } from "@linewatch/lab";
import { type RunningRouter, startRouter } from "@linewatch/router";
import { silentLogger } from "@linewatch/router-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokens, type Tokens } from "../apps/control-plane/security/helpers";
import { createLine, createRoute, eventually } from "../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../helpers/control-plane";

let cp: TestControlPlane;
let lab: Lab;
let router: RunningRouter;
let tokens: Tokens;
const ids = { bad: "", good: "" };

beforeAll(async () => {
  lab = await startLab({ lines: [{ name: "bad", mode: { mode: "long-prompt", minPromptChars: 1500 } }, { name: "good" }] });
  cp = await startTestControlPlane();
  await createRoute(cp, "chat");
  ids.bad = (await createLine(cp, { name: "bad", baseUrl: lab.baseUrl("bad"), routes: [{ route: "chat", weight: 1 }] })).id;
  ids.good = (await createLine(cp, { name: "good", baseUrl: lab.baseUrl("good"), routes: [{ route: "chat", weight: 1 }] })).id;
  tokens = await createTokens(cp);
  router = await startRouter({
    controlPlaneUrl: cp.url,
    token: tokens.router,
    routes: ["chat"],
    port: 0,
    cacheFile: null,
    logger: silentLogger,
    processMetrics: false,
    reportIntervalMs: 500,
    routerId: "edge-e2e",
    // Keep sending to the bad line: the test is about the control plane finding it, not the router.
    ejectAfterFailures: 0,
    retryBudgetPct: 100,
  });
  await eventually(async () => router.client.ready());
}, 60_000);

afterAll(async () => {
  await router?.close();
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("live traffic as evidence, end to end", () => {
  it("a line failing only long prompts is found by live traffic, probed at once, and named in an event; its golden probes pass", async () => {
    const probed = await cp.request(`/v1/lines/${ids.bad}/probe`, { method: "POST", token: tokens.admin });
    expect(probed.status).toBe(200);
    const golden = ((await probed.json()) as { results: { passed: boolean }[] }).results;
    expect(golden.length).toBeGreaterThanOrEqual(3);
    expect(golden.every((r) => r.passed)).toBe(true);

    const long = "Please summarise the following report in two sentences. ".repeat(40);
    const started = Date.now();
    const weightOfBad = async () => {
      const t = (await (await cp.request("/v1/tables/chat", { token: tokens.viewer })).json()) as {
        lines: { id: string; weight: number }[];
      };
      return t.lines.find((l) => l.id === ids.bad)?.weight ?? 0;
    };
    // Real traffic, paced at about 40 requests a second, for as long as the line carries any (at most
    // 30 s and 1500 requests).
    let outAt: number | null = null;
    for (let i = 0; i < 1500 && Date.now() - started < 30_000; i++) {
      await new Promise((r) => setTimeout(r, 20));
      const res = await fetch(`${router.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: long }] }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { choices: { message: { content: string } }[] };
      expect(body.choices[0]?.message.content.length).toBeGreaterThan(0);
      if (i % 10 === 9 && (await weightOfBad()) === 0) {
        outAt = Date.now();
        break;
      }
    }
    // Weight 0 within 30 s of live failures, with a state change naming the live evidence.
    expect(outAt).not.toBeNull();
    expect((outAt ?? Number.POSITIVE_INFINITY) - started).toBeLessThan(30_000);
    const changes = (await (await cp.request(`/v1/events?kind=state_change&line=${ids.bad}`, { token: tokens.viewer })).json()) as {
      events: { reason: string; data: { to: string } }[];
    };
    const out = changes.events.find((e) => e.data.to === "cooldown");
    // Silent at volume, or failing: every answer so far failed (docs/live-evidence.md#judgment).
    expect(out?.reason).toMatch(/^live_evidence: live traffic: (\d+ empty of \d+ answers|all \d+ answers failed \(\d+ empty\))/);
    const event = await eventually(
      async () => {
        const page = (await (await cp.request(`/v1/events?kind=live_evidence&line=${ids.bad}`, { token: tokens.viewer })).json()) as {
          events: {
            at: string;
            reason: string;
            data: { routers: string[]; counts: { empty: number }; probesFailed: number; probeIds: string[] };
          }[];
        };
        return page.events[0];
      },
      30_000,
      200,
    );
    expect(Date.parse(event.at) - started).toBeLessThan(30_000);
    expect(event.data.routers).toEqual(["edge-e2e"]);
    expect(event.data.counts.empty).toBeGreaterThan(0);
    expect(event.reason).toMatch(/\d+ empty of \d+ answers|all \d+ answers failed \(\d+ empty\)/);
    expect(event.data.probeIds.length).toBe(golden.length);
    expect(event.data.probesFailed).toBe(0);
    // The good line's live answers never made it suspect.
    const good = (await (await cp.request(`/v1/events?kind=live_evidence&line=${ids.good}`, { token: tokens.viewer })).json()) as {
      events: unknown[];
    };
    expect(good.events).toHaveLength(0);
    expect(
      await (async () => {
        const t = (await (await cp.request("/v1/tables/chat", { token: tokens.viewer })).json()) as {
          lines: { id: string; weight: number }[];
        };
        return t.lines.find((l) => l.id === ids.good)?.weight;
      })(),
    ).toBe(10_000);
  });
});
