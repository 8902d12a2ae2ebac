// Issue 24 end to end: a real control plane probing lab lines of every protocol on one route, a router,
// and the official SDKs, unchanged, pointed at it. Each protocol's clients get that protocol's lines
// by the table's weights; a silent fault on one line takes it out; the router's errors are the SDK's
// typed errors. Runs on PGlite, and on PostgreSQL with DATABASE_URL.
import Anthropic from "@anthropic-ai/sdk";
import { type Lab, startLab } from "@linewatch/lab";
import { silentLogger } from "@linewatch/router-client";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningRouter, startRouter } from "../../apps/router/src/server";
import { eventually } from "../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../helpers/control-plane";

let cp: TestControlPlane | undefined;
let lab: Lab;
let router: RunningRouter;
let adminToken: string;
const ROUTE = "agents";
const LINES = [
  { name: "claude-a", protocol: "anthropic-messages", apiKey: "sk-claude-a" },
  { name: "claude-b", protocol: "anthropic-messages", apiKey: "sk-claude-b" },
  { name: "resp-a", protocol: "openai-responses", apiKey: "sk-resp-a" },
  { name: "resp-b", protocol: "openai-responses", apiKey: "sk-resp-b" },
  { name: "chat-a", protocol: "openai-chat", apiKey: "sk-chat-a" },
] as const;

async function api(path: string, init: { method?: string; json?: unknown } = {}) {
  const res = await cp!.request(path, { ...init, token: adminToken });
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<unknown>;
}

const anthropic = () => new Anthropic({ baseURL: router.url, apiKey: "sk-the-clients-own", maxRetries: 0, timeout: 15_000 });
const openai = () => new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "sk-the-clients-own", maxRetries: 0, timeout: 15_000 });

/** n requests of one protocol through the router; which line served each. */
async function servedBy(protocol: "anthropic" | "responses", n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const { response } =
      protocol === "anthropic"
        ? await anthropic()
            .messages.create({ model: ROUTE, max_tokens: 100, messages: [{ role: "user", content: `Say hello ${i}` }] })
            .withResponse()
        : await openai()
            .responses.create({ model: ROUTE, input: `Say hello ${i}` })
            .withResponse();
    out.push(response.headers.get("x-linewatch-line") ?? "?");
  }
  return out;
}

beforeAll(async () => {
  lab = await startLab({ lines: LINES.map((l) => ({ name: l.name, apiKey: l.apiKey, baseLatencyMs: 5 })) });
  cp = await startTestControlPlane({ env: { LINEWATCH_SCHEDULER: "true" } });
  adminToken = (
    (await (await cp.request("/v1/tokens", { method: "POST", json: { name: "admin", role: "admin" } })).json()) as { token: string }
  ).token;
  const routerToken = ((await api("/v1/tokens", { method: "POST", json: { name: "router", role: "router" } })) as { token: string }).token;
  await api("/v1/routes", { method: "POST", json: { name: ROUTE } });
  for (const l of LINES) {
    await api("/v1/lines", {
      method: "POST",
      json: {
        name: l.name,
        tier: "paid",
        protocol: l.protocol,
        baseUrl: lab.baseUrl(l.name),
        model: "lab-model",
        apiKey: l.apiKey,
        routes: [{ route: ROUTE, weight: 100 }],
        probeIntervalSec: 2,
      },
    });
  }
  router = await startRouter({
    controlPlaneUrl: cp.url,
    token: routerToken,
    routes: [ROUTE],
    port: 0,
    cacheFile: null,
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
});

describe("every protocol on one route, end to end", () => {
  it("Anthropic clients get the Anthropic lines and Responses clients the Responses lines, spread by the table", async () => {
    const claude = await servedBy("anthropic", 40);
    expect(new Set(claude)).toEqual(new Set(["claude-a", "claude-b"]));
    const responses = await servedBy("responses", 40);
    expect(new Set(responses)).toEqual(new Set(["resp-a", "resp-b"]));
    // Equal weights: neither line of a protocol gets less than a sixth of 40 (a binomial tail well under 1e-4).
    for (const name of ["claude-a", "claude-b"]) expect(claude.filter((x) => x === name).length).toBeGreaterThan(6);
    // The scheduler probes each line with its protocol's shipped samples (jittered over the interval).
    const lines = (await api("/v1/lines")) as { lines: { id: string; name: string }[] };
    const claudeA = lines.lines.find((l) => l.name === "claude-a");
    const samples = await eventually(
      async () => {
        const h = (await api(`/v1/lines/${claudeA?.id}/health`)) as { recent: { sample: string; passed: boolean }[] };
        const names = new Set(h.recent.map((r) => r.sample));
        return names.size >= 4 && h.recent.every((r) => r.passed) ? [...names].sort() : undefined;
      },
      30_000,
      200,
    );
    expect(samples).toEqual(["anthropic-json-fields", "anthropic-long-explainer", "anthropic-nonce-echo", "anthropic-travel-minutes"]);
  });

  it("messages.stream and a streamed responses.create through the router", async () => {
    const final = await anthropic()
      .messages.stream({
        model: ROUTE,
        max_tokens: 300,
        messages: [{ role: "user", content: "In about 100 words, explain status codes." }],
      })
      .finalMessage();
    expect(final.content[0]?.type === "text" ? final.content[0].text.length : 0).toBeGreaterThan(300);
    const stream = await openai().responses.create({ model: ROUTE, input: "In about 100 words, explain status codes.", stream: true });
    let text = "";
    for await (const event of stream) if (event.type === "response.output_text.delta") text += event.delta;
    expect(text.length).toBeGreaterThan(300);
  });

  it("a silent fault on one line of each protocol takes it out of its protocol's table", async () => {
    lab.setMode("claude-b", "truncate", { fraction: 0.25 });
    lab.setMode("resp-b", "stale");
    await eventually(
      async () => {
        const snap = router.client.snapshot(ROUTE);
        const weight = (name: string) => snap?.table.lines.find((l) => l.name === name)?.weight ?? 0;
        return snap !== undefined && weight("claude-b") === 0 && weight("resp-b") === 0 && weight("claude-a") === 10000;
      },
      60_000,
      200,
    );
    expect(new Set(await servedBy("anthropic", 20))).toEqual(new Set(["claude-a"]));
    expect(new Set(await servedBy("responses", 20))).toEqual(new Set(["resp-a"]));
  });

  it("the router's own errors are the SDK's typed errors", async () => {
    await expect(
      anthropic().messages.create({ model: "no-such-route", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
    ).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(openai().responses.create({ model: "no-such-route", input: "hi" })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
