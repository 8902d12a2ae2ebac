// Issue 12: outcome reports from a real router to a real control plane, across a control-plane
// stop and restart (in process, on the same database and port): the router keeps serving, the
// backlog stays bounded, and a push whose answer was lost is not counted twice. Pushes are driven
// by hand (flush + push), so nothing waits on a timer. Issue 16 item 8: the token's role is checked.
import { lineOutcomes } from "@linewatch/db";
import { type Lab, startLab } from "@linewatch/lab";
import { ConfigError, loadConfig, RouterTokenError, type RunningRouter, startRouter } from "@linewatch/router";
import { silentLogger } from "@linewatch/router-client";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokens, type Tokens } from "../apps/control-plane/security/helpers";
import { createLine, createRoute, eventually } from "../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../helpers/control-plane";
import { freePort } from "../helpers/private-postgres";
import { createTestDatabase } from "../helpers/test-db";

let cp: TestControlPlane;
let lab: Lab;
let tokens: Tokens;
let lineId = "";
let env: Record<string, string> = {};
let router: RunningRouter | undefined;

const chat = () => ({ model: "chat", messages: [{ role: "user", content: "Say hello." }] });

async function send(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${router?.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chat()),
    });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
  }
}

async function stored(): Promise<{ windows: number; requests: number }> {
  const [row] = await cp.database.db
    .select({ windows: sql<number>`count(*)::int`, requests: sql<number>`coalesce(sum(${lineOutcomes.requests}), 0)::int` })
    .from(lineOutcomes);
  return { windows: Number(row?.windows ?? 0), requests: Number(row?.requests ?? 0) };
}

beforeAll(async () => {
  lab = await startLab({ lines: [{ name: "a" }] });
  env = { PORT: String(await freePort()), LINEWATCH_SHIPPED_SAMPLES: "false" };
  cp = await startTestControlPlane({ env, testDb: await createTestDatabase({ persistent: true }) });
  await createRoute(cp, "chat");
  lineId = (await createLine(cp, { name: "a", baseUrl: lab.baseUrl("a"), routes: [{ route: "chat", weight: 1 }] })).id;
  tokens = await createTokens(cp);
}, 60_000);

afterAll(async () => {
  await router?.close();
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

describe("the router's token (issue 16 item 8)", () => {
  it("refuses to start with a viewer or an admin token", async () => {
    for (const token of [tokens.viewer, tokens.admin]) {
      await expect(
        startRouter({ controlPlaneUrl: cp.url, token, port: 0, cacheFile: null, logger: silentLogger, processMetrics: false }),
      ).rejects.toThrow(RouterTokenError);
    }
  });

  it("refuses a token minted for another role before it asks the control plane", () => {
    expect(() => loadConfig({ LINEWATCH_URL: cp.url, LINEWATCH_TOKEN: tokens.viewer })).toThrow(ConfigError);
    expect(() => loadConfig({ LINEWATCH_URL: cp.url, LINEWATCH_TOKEN: tokens.admin })).toThrow(
      /an admin token; a router needs a router token/,
    );
    expect(loadConfig({ LINEWATCH_URL: cp.url, LINEWATCH_TOKEN: tokens.router }).token).toBe(tokens.router);
  });
});

describe("outcome reports across a control-plane stop and restart", () => {
  it("keeps serving, keeps a bounded backlog, and counts nothing twice", async () => {
    let loseNextAck = false;
    const fetchWithLostAck: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (loseNextAck && String(input).endsWith("/v1/outcomes")) {
        loseNextAck = false;
        await res.arrayBuffer();
        throw new Error("connection reset after the control plane stored the report");
      }
      return res;
    };
    router = await startRouter({
      controlPlaneUrl: cp.url,
      token: tokens.router,
      routes: ["chat"],
      port: 0,
      cacheFile: null,
      logger: silentLogger,
      processMetrics: false,
      reportIntervalMs: 0,
      reportBacklog: 3,
      routerId: "edge-1",
      clientOptions: { fetch: fetchWithLostAck, startTimeoutMs: 5_000 },
    });
    await eventually(async () => router?.client.ready());
    expect((await fetch(`${router.url}/readyz`)).status).toBe(200);
    const reporter = router.reporter;

    await send(5);
    reporter.flush();
    await reporter.push();
    expect(reporter.stats()).toMatchObject({ backlog: 0, pushed: 1 });
    expect(await stored()).toEqual({ windows: 1, requests: 5 });

    await cp.stop();
    // The control plane is gone: traffic goes on, windows wait in a backlog of at most 3.
    for (let i = 0; i < 5; i++) {
      await send(5);
      reporter.flush();
      await reporter.push();
    }
    expect(reporter.stats()).toMatchObject({ backlog: 3, dropped: 2 });

    // Started again on the same database and port (the line has no key: no secret to carry over).
    cp = await startTestControlPlane({ env, testDb: cp.testDb });
    expect(await stored()).toEqual({ windows: 1, requests: 5 });
    // The first push after the restart is stored but its answer never arrives: it is pushed again.
    loseNextAck = true;
    await reporter.push();
    expect(reporter.stats().backlog).toBe(3);
    expect(await stored()).toEqual({ windows: 2, requests: 10 });
    await reporter.push();
    expect(reporter.stats()).toMatchObject({ backlog: 0, dropped: 2 });
    // 1 window before the outage + the 3 the backlog kept; the repeated one counted once.
    expect(await stored()).toEqual({ windows: 4, requests: 20 });
    const health = (await (await cp.request(`/v1/lines/${lineId}/health`, { token: tokens.viewer })).json()) as {
      live: { recent: { requests: number; counts: { ok: number }; routers: string[] } };
    };
    expect(health.live.recent).toMatchObject({ requests: 20, counts: { ok: 20 }, routers: ["edge-1"] });
  });
});
