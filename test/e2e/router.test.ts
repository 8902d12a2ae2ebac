import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Lab, startLab } from "@linewatch/lab";
import { silentLogger } from "@linewatch/router-client";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningRouter, startRouter } from "../../apps/router/src/server";
import { eventually } from "../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../helpers/control-plane";

// docs/router.md end to end: real control plane + lab lines + router, called with the official openai client.
let cp: TestControlPlane | undefined;
let lab: Lab;
let router: RunningRouter;
let adminToken: string;
let routerToken: string;
const dir = mkdtempSync(join(tmpdir(), "lw-e2e-"));
const cacheFile = join(dir, "router-tables.json");
const ROUTE = "chat-default";
const INTERVAL_SEC = 2;

async function api(path: string, init: { method?: string; json?: unknown; token?: string } = {}) {
  const res = await cp!.request(path, { ...init, token: init.token ?? adminToken });
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<unknown>;
}

const client = (r: RunningRouter) => new OpenAI({ baseURL: `${r.url}/v1`, apiKey: "unused-by-the-router", maxRetries: 0, timeout: 15_000 });

/** Send n chat completions through the router; returns which line served each. */
async function servedBy(r: RunningRouter, n: number): Promise<string[]> {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const { response, data } = await client(r)
      .chat.completions.create({ model: ROUTE, messages: [{ role: "user", content: `Say hello ${i}` }] })
      .withResponse();
    expect(data.choices[0]?.message.content?.length).toBeGreaterThan(0);
    lines.push(response.headers.get("x-linewatch-line") ?? "?");
  }
  return lines;
}

beforeAll(async () => {
  lab = await startLab({
    lines: [
      { name: "paid-a", baseLatencyMs: 5 },
      { name: "paid-b", baseLatencyMs: 5, apiKey: "sk-paid-b-secret" },
      { name: "free-a", baseLatencyMs: 5 },
      { name: "free-b", baseLatencyMs: 5 },
    ],
  });
  cp = await startTestControlPlane({ env: { LINEWATCH_SCHEDULER: "true" } });
  // The first token ends the open mode: from here on every call carries one.
  const admin = await (await cp.request("/v1/tokens", { method: "POST", json: { name: "e2e-admin", role: "admin" } })).json();
  adminToken = (admin as { token: string }).token;
  routerToken = ((await api("/v1/tokens", { method: "POST", json: { name: "e2e-router", role: "router" } })) as { token: string }).token;
  await api("/v1/routes", { method: "POST", json: { name: ROUTE, freeShareCap: 0.4 } });
  for (const [name, tier] of [
    ["paid-a", "paid"],
    ["paid-b", "paid"],
    ["free-a", "free"],
    ["free-b", "free"],
  ] as const) {
    await api("/v1/lines", {
      method: "POST",
      json: {
        name,
        tier,
        protocol: "openai-chat",
        baseUrl: lab.baseUrl(name),
        model: "lab-model",
        routes: [{ route: ROUTE, weight: 100 }],
        probeIntervalSec: INTERVAL_SEC,
        ...(name === "paid-b" ? { apiKey: "sk-paid-b-secret" } : {}),
      },
    });
  }
  router = await startRouter({
    controlPlaneUrl: cp.url,
    token: routerToken,
    routes: [ROUTE],
    port: 0,
    cacheFile,
    waitSec: 2,
    logger: silentLogger,
    processMetrics: false,
  });
}, 120_000);

afterAll(async () => {
  await router?.close();
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("router end to end", () => {
  it("serves chat completions through the official openai client, tagging line and table version", async () => {
    const { response, data } = await client(router)
      .chat.completions.create({ model: ROUTE, messages: [{ role: "user", content: "Repeat this token exactly: lw-abc12345" }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toContain("lw-abc12345");
    expect(["paid-a", "paid-b", "free-a", "free-b"]).toContain(response.headers.get("x-linewatch-line"));
    const version = Number(response.headers.get("x-linewatch-table-version"));
    expect(version).toBeGreaterThanOrEqual(1);
  });

  it("streams SSE through with stream: true", async () => {
    const stream = await client(router).chat.completions.create({
      model: ROUTE,
      stream: true,
      messages: [
        { role: "user", content: "In about 100 words (around 600 characters), explain why a load balancer should check content." },
      ],
    });
    let text = "";
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta?.content ?? "";
    }
    expect(chunks).toBeGreaterThan(1);
    expect(text.length).toBeGreaterThan(200);
  });

  it("reaches a line whose key only a router token receives", async () => {
    const lines = await servedBy(router, 40);
    expect(new Set(lines)).toContain("paid-b");
    expect(lab.stats("paid-b").byStatus?.["401"] ?? 0).toBe(0);
    // The same table read with the admin token carries no key.
    const t = await api(`/v1/tables/${ROUTE}`);
    expect(JSON.stringify(t)).not.toContain("sk-paid-b-secret");
  });

  it("stops sending traffic to a line that starts truncating, within the detection bound", async () => {
    lab.setMode("free-a", "truncate", { fraction: 0.25 });
    // 2 intervals + a timeout (docs/tables.md), plus the router's long-poll; generous for a busy machine.
    await eventually(
      async () => {
        const snap = router.client.snapshot(ROUTE);
        return snap !== undefined && !snap.table.lines.some((l) => l.name === "free-a" && l.weight > 0);
      },
      40_000,
      100,
    );
    const lines = await servedBy(router, 60);
    expect(lines).not.toContain("free-a");
    expect(new Set(lines).size).toBeGreaterThanOrEqual(2);
  });

  it("keeps serving on the last table when the control plane dies, and a new router starts from the file", async () => {
    const version = router.client.snapshot(ROUTE)!.table.version;
    await cp!.stop();
    const afterDeath = await servedBy(router, 10);
    expect(afterDeath.length).toBe(10);
    expect(afterDeath).not.toContain("free-a");

    const cold = await startRouter({
      controlPlaneUrl: cp!.url,
      token: routerToken,
      routes: [ROUTE],
      port: 0,
      cacheFile,
      waitSec: 2,
      logger: silentLogger,
      processMetrics: false,
      clientOptions: { startTimeoutMs: 1_000 },
    });
    try {
      expect(cold.client.snapshot(ROUTE)?.table.version).toBe(version);
      const served = await servedBy(cold, 10);
      expect(served.length).toBe(10);
      // It read the keys from the file too: paid-b (key required) answers through it.
      expect(served).not.toContain("free-a");
    } finally {
      await cold.close();
    }
    await cp!.testDb.dispose();
    cp = undefined;
  });
});
