import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver";
import { type CliRun, runCli } from "./run-cli";

// Every command of the CLI, in process (runCli: the binary's code without a process per case),
// run from a directory outside the repository, against real control planes. binary.test.ts
// (npm run test:slow) runs the real binary.

const work = mkdtempSync(join(tmpdir(), "lw-cli-"));

function cli(args: string[], opts: { url?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  return runCli(args, { env: { ...(opts.url ? { LINEWATCH_URL: opts.url } : {}), ...opts.env }, cwd: work });
}

/** Run and expect success; returns stdout (parsed when --json). */
async function ok(args: string[], opts: Parameters<typeof cli>[1] = {}): Promise<string> {
  const r = await cli(args, opts);
  expect(r.code, `linewatch ${args.join(" ")}\n${r.stderr}`).toBe(0);
  return r.stdout;
}
const okJson = async <T>(args: string[], opts: Parameters<typeof cli>[1] = {}): Promise<T> =>
  JSON.parse(await ok([...args, "--json"], opts)) as T;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const writeFile = (name: string, content: unknown) => {
  const path = join(work, name);
  writeFileSync(path, typeof content === "string" ? content : stringify(content));
  return name; // relative: the CLI runs in `work`
};

interface LineView {
  id: string;
  name: string;
  adminState: string;
  hasApiKey: boolean;
  routes: { route: string; weight: number }[];
}
interface TableView {
  version: number;
  mode: string;
  lines: { name: string; weight: number }[];
}

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ lines: ["paid-a", "paid-b", "free-a"].map((name) => ({ name, baseLatencyMs: 5 })) });
});
afterAll(async () => {
  await lab?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("usage and exit codes", () => {
  it("2 for a usage error, 0 for help and version (the other usage errors: run.test.ts)", async () => {
    expect((await cli([])).code).toBe(2);
    const unknown = await cli(["lines", "list", "--bogus"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--bogus");
    const help = await cli(["lines", "add", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--base-url");
    expect((await ok(["--version"])).trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("3 when the control plane cannot be reached", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const r = await cli(["lines", "list"], { url });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`cannot reach the control plane at ${url}`);
    const json = await cli(["health", "--json", "--url", url]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stderr).error.code).toBe("unreachable");
  });
});

describe("commands against a running control plane", () => {
  let cp: TestControlPlane;
  const run = (args: string[], env: Record<string, string> = {}) => cli(args, { url: cp.url, env });
  const okRun = (args: string[], env: Record<string, string> = {}) => ok(args, { url: cp.url, env });
  const okRunJson = <T>(args: string[]) => okJson<T>(args, { url: cp.url });

  beforeAll(async () => {
    cp = await startTestControlPlane();
  }, 60_000);
  afterAll(async () => {
    await cp?.stop();
  });

  it("routes add / list", async () => {
    expect(await okRun(["routes", "add", "chat", "--free-share-cap", "0.25"])).toContain("created route chat");
    const { routes } = await okRunJson<{ routes: { name: string; freeShareCap: number }[] }>(["routes", "list"]);
    expect(routes).toEqual([expect.objectContaining({ name: "chat", freeShareCap: 0.25 })]);
  });

  it("lines add, with the key from the environment and never printed", async () => {
    const line = await okJson<LineView & { apiKey?: string }>(
      [
        "lines",
        "add",
        "paid-a",
        "--tier",
        "paid",
        "--base-url",
        lab.baseUrl("paid-a"),
        "--model",
        "lab-model",
        "--route",
        "chat=60",
        "--api-key-env",
        "PAID_A_KEY",
      ],
      { url: cp.url, env: { PAID_A_KEY: "sk-secret-123" } },
    );
    expect(line).toMatchObject({ name: "paid-a", hasApiKey: true, routes: [{ route: "chat", weight: 60 }] });
    expect(JSON.stringify(line)).not.toContain("sk-secret-123");
    expect(
      await okRun([
        "lines",
        "add",
        "paid-b",
        "--tier",
        "paid",
        "--base-url",
        lab.baseUrl("paid-b"),
        "--model",
        "lab-model",
        "--route",
        "chat=40",
      ]),
    ).toMatch(/created line paid-b/);
    const list = await okRun(["lines", "list"]);
    expect(list).toMatch(/^NAME\s+TIER/);
    expect(list).toMatch(/paid-a\s+paid\s+openai-chat\s+lab-model\s+chat:60\s+active\s+yes/);
    expect(list).not.toContain("sk-secret-123");
  });

  it("exit 1 naming each bad field (and the option that fed it)", async () => {
    const r = await run(["lines", "add", "x", "--tier", "cheap", "--base-url", "not-a-url", "--model", "m"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("tier:");
    expect(r.stderr).toContain("baseUrl: must be an http(s) URL (--base-url)");
    const json = await run(["lines", "add", "x", "--tier", "cheap", "--base-url", "http://127.0.0.1:1", "--model", "m", "--json"]);
    expect(json.code).toBe(1);
    const envelope = JSON.parse(json.stderr) as { error: { code: string; details: { field: string }[] } };
    expect(envelope.error.code).toBe("invalid_request");
    expect(envelope.error.details.map((d) => d.field)).toEqual(["tier"]);
    const missingKey = await run([
      "lines",
      "add",
      "x",
      "--tier",
      "paid",
      "--base-url",
      "http://127.0.0.1:1",
      "--model",
      "m",
      "--api-key-env",
      "NOPE",
    ]);
    expect(missingKey.code).toBe(1);
    expect(missingKey.stderr).toContain("NOPE is not set");
    const duplicate = await run(["lines", "add", "paid-a", "--tier", "paid", "--base-url", "http://127.0.0.1:1", "--model", "m"]);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain("already exists");
  });

  it("lines show by name or id; an unknown line is exit 1", async () => {
    const byName = await okRunJson<LineView>(["lines", "show", "paid-a"]);
    const byId = await okRunJson<LineView>(["lines", "show", byName.id]);
    expect(byId).toEqual(byName);
    expect(await okRun(["lines", "show", "paid-a"])).toMatch(/apiKey\s+set \(never shown\)/);
    const missing = await run(["lines", "show", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('line "nope" not found');
  });

  it("probe, health and table", async () => {
    const { results } = await okRunJson<{ results: { sample: string; passed: boolean }[] }>(["probe", "paid-a"]);
    expect(results.map((r) => r.sample).sort()).toEqual(["json-fields", "long-explainer", "nonce-echo", "travel-minutes"]);
    expect(results.every((r) => r.passed)).toBe(true);
    expect(await okRun(["probe", "paid-b"])).toMatch(/nonce-echo\s+100\s+yes/);

    expect(await okRun(["health", "paid-a"])).toMatch(/live\s+no live answers reported/);
    // A router's report (open mode: no token needed) shows next to the probes.
    const { lines } = (await (await cp.request("/v1/lines")).json()) as { lines: { id: string; name: string }[] };
    const paidA = lines.find((l) => l.name === "paid-a")?.id as string;
    const zero = { ok: 0, empty: 0, masked_error: 0, cut: 0, http_4xx: 0, http_5xx: 0, rate_limited: 0, timeout: 0, connect: 0 };
    const pushed = await cp.request("/v1/outcomes", {
      method: "POST",
      json: {
        routerId: "edge-1",
        windowId: "w1",
        windowStart: new Date(Date.now() - 5000).toISOString(),
        windowEnd: new Date().toISOString(),
        lines: [
          { lineId: paidA, counts: { ...zero, ok: 98, http_5xx: 2 }, promptTokens: 0, completionTokens: 0, latencyMsSum: 0, ttfbMsSum: 0 },
        ],
      },
    });
    expect(pushed.status).toBe(200);
    const detail = await okRun(["health", "paid-a"]);
    expect(detail).toMatch(/state\s+healthy/);
    expect(detail).toContain("recent probes:");
    expect(detail).toMatch(/live\s+100 answers \(98 ok, 2 http_5xx\), 98\.0% ok, failures 2\.0%/);
    expect(await okRun(["health"])).toMatch(/paid-a .*98\.0% of 100/);
    const all = await okRunJson<{ lines: { name: string; state: string }[] }>(["health"]);
    expect(all.lines.map((l) => [l.name, l.state])).toEqual([
      ["paid-a", "healthy"],
      ["paid-b", "healthy"],
    ]);

    // A line that cuts its answers (on no route, removed after): health names the checks each probe failed.
    lab.setMode("free-a", "truncate", { fraction: 0.2 });
    const created = await cp.request("/v1/lines", {
      method: "POST",
      json: { name: "cut-a", tier: "free", protocol: "openai-chat", baseUrl: lab.baseUrl("free-a"), model: "m", routes: [] },
    });
    expect(created.status).toBe(201);
    try {
      await okRun(["probe", "cut-a"]);
      const cut = await okRun(["health", "cut-a"]);
      expect(cut).toContain("FAILED CHECKS");
      expect(cut).toMatch(/long-explainer\s.*minLength/);
      expect(cut).toMatch(/latest failed probe \(.*\): failed (minLength|requiredFields|answer|anchoredLength)/);
      expect(cut).toMatch(/evidence\s+hard 0\.0 of \d+\.\d \(usual rate [\d.]+%\), content \d+\.\d of \d+\.\d/);
    } finally {
      lab.setMode("free-a", "ok");
      await okRun(["lines", "rm", "cut-a"]);
    }

    const t = await okRunJson<TableView>(["table", "chat"]);
    expect(t.lines.reduce((a, l) => a + l.weight, 0)).toBe(10_000);
    expect(await okRun(["table", "chat"])).toMatch(/paid-a\s+paid\s+healthy\s+6000\s+60\.0%\s+openai-chat/);
    expect((await run(["table", "nope"])).code).toBe(1);
  });

  it("drain shows weight 0 in the table; enable brings the line back", async () => {
    expect(await okRun(["lines", "drain", "paid-a"])).toContain("paid-a: active → drained");
    let t = await okRunJson<TableView>(["table", "chat"]);
    expect(t.lines.find((l) => l.name === "paid-a")?.weight ?? 0).toBe(0);
    expect(t.lines.find((l) => l.name === "paid-b")?.weight).toBe(10_000);
    expect(await okRun(["lines", "enable", "paid-a"])).toContain("paid-a: drained → active");
    t = await okRunJson<TableView>(["table", "chat"]);
    expect(t.lines.find((l) => l.name === "paid-b")?.weight).toBeLessThan(10_000);
  });

  it("events", async () => {
    const page = await okRunJson<{ events: { kind: string; reason: string }[] }>(["events", "--kind", "table_published", "--limit", "5"]);
    expect(page.events.length).toBeGreaterThan(0);
    expect(page.events.every((e) => e.kind === "table_published")).toBe(true);
    expect(await okRun(["events", "--line", "paid-a"])).toMatch(/state_change\s+paid-a/);
  });

  it("samples add (flags and file) / list / rm", async () => {
    expect(
      await okRun([
        "samples",
        "add",
        "capital",
        "--prompt",
        "Capital of France? One word.",
        "--answer",
        "paris",
        "--max-latency-ms",
        "5000",
      ]),
    ).toContain("created sample capital");
    writeFile("sample.yaml", {
      name: "json-city",
      protocol: "openai-chat",
      request: { messages: [{ role: "user", content: "A city as JSON" }] },
      expect: { requiredFields: ["content.city"] },
    });
    await okRun(["samples", "add", "-f", "sample.yaml"]);
    const { samples } = await okRunJson<{ samples: { name: string; source: string; expect: Record<string, unknown> }[] }>([
      "samples",
      "list",
    ]);
    expect(samples.find((s) => s.name === "capital")).toMatchObject({ source: "api", expect: { answer: "paris", maxLatencyMs: 5000 } });
    expect(samples.find((s) => s.name === "nonce-echo")?.source).toBe("shipped");

    const bad = await run(["samples", "add", "broken", "--prompt", "hi", "--matches", "(unclosed"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("expect.matches");
    expect(bad.stderr).toContain("(--matches)");
    expect(await okRun(["samples", "rm", "capital"])).toContain("deleted sample capital");
    expect((await run(["samples", "rm", "capital"])).code).toBe(1);
  });

  it("samples add --prompt writes the request in the protocol's shape (Responses: input; Anthropic: messages)", async () => {
    await okRun(["samples", "add", "r-capital", "--protocol", "openai-responses", "--prompt", "Capital of France?", "--max-tokens", "20"]);
    await okRun(["samples", "add", "a-capital", "--protocol", "anthropic-messages", "--prompt", "Capital of France?"]);
    const { samples } = await okRunJson<{ samples: { name: string; protocol: string; request: unknown }[] }>(["samples", "list"]);
    expect(samples.find((s) => s.name === "r-capital")).toMatchObject({
      protocol: "openai-responses",
      request: { input: "Capital of France?", max_output_tokens: 20 },
    });
    expect(samples.find((s) => s.name === "a-capital")).toMatchObject({
      protocol: "anthropic-messages",
      request: { messages: [{ role: "user", content: "Capital of France?" }], max_tokens: 200 },
    });
    const list = await okRun(["samples", "list"]);
    expect(list).toMatch(/r-capital\s+openai-responses/);
    for (const name of ["r-capital", "a-capital"]) await okRun(["samples", "rm", name]);
  });

  it("health colours a line at weight 0 by its state, not its score (on a terminal, or FORCE_COLOR)", async () => {
    await okRun([
      "lines",
      "add",
      "free-a",
      "--tier",
      "free",
      "--base-url",
      lab.baseUrl("free-a"),
      "--model",
      "lab-model",
      "--route",
      "chat=50",
    ]);
    // A cached answer fails the nonce check only: the probes still score high while the line cools down.
    lab.setMode("free-a", "stale");
    for (let i = 0; i < 2; i++) await okRun(["probe", "free-a"]);
    const esc = String.fromCharCode(27);
    const red = (text: string) => `${esc}[31m${text}${esc}[0m`;
    const { lines } = await okRunJson<{ lines: { name: string; state: string; score: number; tone: string }[] }>(["health"]);
    const freeA = lines.find((l) => l.name === "free-a");
    expect(freeA).toMatchObject({ state: "cooldown", tone: "down" });
    const paidA = lines.find((l) => l.name === "paid-a");
    expect(paidA).toMatchObject({ state: "healthy", tone: "ok" });
    expect(paidA?.score).toBeGreaterThanOrEqual(80);

    const all = await okRun(["health"], { FORCE_COLOR: "1" });
    const row = (name: string) => all.split("\n").find((l) => l.startsWith(`${name} `)) ?? "";
    expect(row("free-a")).toContain(`${red("cooldown")}  ${red((freeA?.score ?? 0).toFixed(1))}`);
    expect(row("paid-a")).toContain(`${esc}[32m${(paidA?.score ?? 0).toFixed(1)}${esc}[0m`);
    // The columns stay aligned: the codes take no width, so every row's state, score and factor start
    // under their headers.
    const [header = "", ...rows] = all
      .replaceAll(new RegExp(`${esc}\\[[0-9;]*m`, "g"), "")
      .trimEnd()
      .split("\n");
    for (const [column, value] of [
      ["STATE", /^[a-z]+ /],
      ["SCORE", /^(\d+\.\d|-) /],
      ["FACTOR", /^\d\.\d\d /],
    ] as const)
      for (const r of rows) expect(r.slice(header.indexOf(column)), `${column} in ${r}`).toMatch(value);
    const plainAll = await okRun(["health"]);
    expect(await okRun(["health", "free-a"], { FORCE_COLOR: "1" })).toMatch(new RegExp(`score\\s+${esc}\\[31m\\d`));

    // Piped (no terminal) or NO_COLOR: plain text for scripts.
    expect(plainAll).not.toContain(esc);
    expect(await okRun(["health"], { FORCE_COLOR: "1", NO_COLOR: "1" })).not.toContain(esc);
    lab.setMode("free-a", "ok");
  });

  it("lines rm", async () => {
    expect(await okRun(["lines", "rm", "paid-b"])).toContain("deleted line paid-b");
    expect((await run(["lines", "show", "paid-b"])).code).toBe(1);
  });
});

describe("apply and export", () => {
  let cp: TestControlPlane;
  const run = (args: string[], env: Record<string, string> = {}) => cli(args, { url: cp.url, env });
  const okRun = (args: string[], env: Record<string, string> = {}) => ok(args, { url: cp.url, env });
  const api = async <T>(path: string, init: Parameters<TestControlPlane["request"]>[1] = {}): Promise<T> => {
    const res = await cp.request(path, init);
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    return (res.status === 204 ? null : await res.json()) as T;
  };
  const lines = async () => (await api<{ lines: LineView[] }>("/v1/lines")).lines;
  const KEY_ENV = { PAID_A_KEY: "sk-from-env" };

  const registry = () => ({
    routes: [
      { name: "chat", freeShareCap: 0.2 },
      { name: "batch", onAllDown: "fail-closed" },
    ] as Record<string, unknown>[],
    lines: [
      {
        name: "paid-a",
        tier: "paid",
        protocol: "openai-chat",
        baseUrl: lab.baseUrl("paid-a"),
        model: "lab-model",
        apiKeyEnv: "PAID_A_KEY",
        routes: [{ route: "chat", weight: 60 }],
      },
      {
        name: "free-a",
        tier: "free",
        protocol: "openai-chat",
        baseUrl: lab.baseUrl("free-a"),
        model: "lab-model",
        headers: { "X-Org": "acme" },
        routes: [
          { route: "chat", weight: 40 },
          { route: "batch", weight: 10 },
        ],
        probeIntervalSec: 120,
        maxShare: 0.5,
      },
    ],
    samples: [
      {
        name: "capital",
        protocol: "openai-chat",
        routes: ["chat"],
        request: { messages: [{ role: "user", content: "Capital of France? One word." }], max_tokens: 20 },
        expect: { answer: "paris", maxLatencyMs: 5000 },
      },
    ],
  });

  beforeAll(async () => {
    cp = await startTestControlPlane();
  }, 60_000);
  afterAll(async () => {
    await cp?.stop();
  });

  it("--dry-run prints the plan and changes nothing", async () => {
    const file = writeFile("registry.yaml", registry());
    const out = await okRun(["apply", "-f", file, "--dry-run"], KEY_ENV);
    expect(out).toContain("+ route chat");
    expect(out).toContain("+ route batch");
    expect(out).toMatch(/\+ line paid-a \(paid, .*chat:60, key from \$PAID_A_KEY\)/);
    expect(out).toContain("+ sample capital");
    expect(out).toContain("5 changes: 5 to create, 0 to change, 0 to delete");
    expect(out).toContain("dry run: nothing changed");
    expect(out).not.toContain("sk-from-env");
    expect(await lines()).toEqual([]);
    expect((await api<{ routes: unknown[] }>("/v1/routes")).routes).toEqual([]);
  });

  it("applies a file, and applying it again changes nothing", async () => {
    const file = writeFile("registry.yaml", registry());
    expect(await okRun(["apply", "-f", file], KEY_ENV)).toContain("applied 5 changes");
    const after = await lines();
    expect(after.map((l) => [l.name, l.hasApiKey, l.routes])).toEqual([
      [
        "free-a",
        false,
        [
          { route: "batch", weight: 10 },
          { route: "chat", weight: 40 },
        ],
      ],
      ["paid-a", true, [{ route: "chat", weight: 60 }]],
    ]);
    const version = (await api<TableView>("/v1/tables/chat")).version;

    // Second time: an empty plan, exit 0, and the table is not republished. The key is not needed again.
    const again = await okRun(["apply", "-f", file]);
    expect(again.trim()).toBe(`no changes: ${cp.url} matches ${file}`);
    const json = await okJson<{ changes: unknown[]; applied: number }>(["apply", "-f", file], { url: cp.url });
    expect(json).toMatchObject({ changes: [], applied: 0 });
    expect((await api<TableView>("/v1/tables/chat")).version).toBe(version);
  });

  it("shows and applies a change field by field", async () => {
    const changed = registry();
    changed.lines[0]!.routes = [{ route: "chat", weight: 70 }];
    (changed.lines[1] as Record<string, unknown>).maxShare = undefined;
    const file = writeFile("changed.yaml", changed);
    const out = await okRun(["apply", "-f", file]);
    expect(out).toContain("~ line paid-a\n    routes: chat:60 → chat:70");
    expect(out).toContain("~ line free-a\n    maxShare: 0.5 → (none)");
    expect(out).toContain("2 changes: 0 to create, 2 to change, 0 to delete");
    expect((await lines()).find((l) => l.name === "paid-a")?.routes).toEqual([{ route: "chat", weight: 70 }]);
    expect((await okRun(["apply", "-f", file])).trim()).toMatch(/^no changes/);
    // Back to the first file for the tests below.
    await okRun(["apply", "-f", writeFile("registry.yaml", registry())]);
  });

  it("leaves what the file does not list, unless --prune", async () => {
    await api("/v1/routes", { method: "POST", json: { name: "extra-route" } });
    await api("/v1/lines", {
      method: "POST",
      json: {
        name: "extra-line",
        tier: "free",
        protocol: "openai-chat",
        baseUrl: lab.baseUrl("free-a"),
        model: "m",
        routes: [{ route: "extra-route", weight: 1 }],
      },
    });
    await api("/v1/samples", {
      method: "POST",
      json: { name: "extra-sample", protocol: "openai-chat", request: { messages: [{ role: "user", content: "hi" }] }, expect: {} },
    });
    const file = writeFile("registry.yaml", registry());
    expect((await okRun(["apply", "-f", file])).trim()).toMatch(/^no changes/);

    const dry = await okRun(["apply", "-f", file, "--prune", "--dry-run"]);
    expect(dry).toContain("- line extra-line");
    expect(dry).toContain("- sample extra-sample");
    expect(dry).toContain("- route extra-route");
    expect(dry).not.toContain("nonce-echo"); // shipped samples are never pruned
    expect((await lines()).map((l) => l.name)).toContain("extra-line");

    expect(await okRun(["apply", "-f", file, "--prune"])).toContain("applied 3 changes");
    expect((await lines()).map((l) => l.name)).toEqual(["free-a", "paid-a"]);
    const samples = (await api<{ samples: { name: string }[] }>("/v1/samples")).samples.map((s) => s.name);
    // The file's sample, and every shipped one (probes/<protocol>/*.yaml; never pruned).
    const kinds = ["json-fields", "long-explainer", "nonce-echo", "travel-minutes"];
    expect(samples).toEqual(["capital", ...kinds, ...kinds.map((k) => `anthropic-${k}`), ...kinds.map((k) => `responses-${k}`)].sort());
    expect((await api<{ routes: { name: string }[] }>("/v1/routes")).routes.map((r) => r.name)).toEqual(["batch", "chat"]);
    expect((await okRun(["apply", "-f", file, "--prune"])).trim()).toMatch(/^no changes/);
  });

  it("--prune only prunes the sections the file has", async () => {
    await api("/v1/samples", {
      method: "POST",
      json: { name: "another", protocol: "openai-chat", request: { messages: [{ role: "user", content: "hi" }] }, expect: {} },
    });
    const out = await okRun(["apply", "-f", writeFile("samples-only.yaml", "samples: []\n"), "--prune"]);
    expect(out).toContain("- sample another");
    expect(out).toContain("- sample capital");
    expect(out).not.toContain("line");
    expect((await lines()).length).toBe(2);
    await okRun(["apply", "-f", writeFile("registry.yaml", registry())]);
  });

  it("refuses an invalid file before changing anything, naming the field", async () => {
    const bad = registry();
    bad.routes.push({ name: "new-route" });
    (bad.lines[1] as Record<string, unknown>).tier = "cheap";
    (bad.samples[0]!.expect as Record<string, unknown>).minLength = -1;
    const r = await run(["apply", "-f", writeFile("bad.yaml", bad)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("lines[1].tier");
    expect(r.stderr).toContain("samples[0].expect.minLength");
    expect((await api<{ routes: { name: string }[] }>("/v1/routes")).routes.map((x) => x.name)).not.toContain("new-route");

    const json = await run(["apply", "-f", "bad.yaml", "--json"]);
    expect(json.code).toBe(1);
    expect((JSON.parse(json.stderr) as { error: { details: { field: string }[] } }).error.details.map((d) => d.field)).toEqual([
      "lines[1].tier",
      "samples[0].expect.minLength",
    ]);

    const unknownRoute = registry();
    unknownRoute.lines[0]!.routes = [{ route: "nowhere", weight: 1 }];
    const u = await run(["apply", "-f", writeFile("unknown-route.yaml", unknownRoute)]);
    expect(u.code).toBe(1);
    expect(u.stderr).toContain('lines[0].routes[0].route: no route "nowhere"');

    const keyed = registry();
    keyed.lines[0]!.name = "paid-new";
    const k = await run(["apply", "-f", writeFile("keyed.yaml", keyed)]);
    expect(k.code).toBe(1);
    expect(k.stderr).toContain("lines[0].apiKeyEnv: the environment variable PAID_A_KEY is not set");

    const literal = await run(["apply", "-f", writeFile("literal.yaml", { lines: [{ ...registry().lines[0], apiKey: "sk-in-git" }] })]);
    expect(literal.code).toBe(1);
    expect(literal.stderr).toContain("lines[0].apiKey");

    const typo = await run(["apply", "-f", writeFile("typo.yaml", { line: [] })]);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain("line: unknown section");
    expect((await lines()).map((l) => l.name)).toEqual(["free-a", "paid-a"]);
  });

  it("export writes the registry as an apply file: no keys, no shipped samples", async () => {
    const text = await okRun(["export"]);
    expect(text).toMatch(/^# linewatch registry exported from/);
    expect(text).not.toContain("sk-from-env");
    const doc = parse(text) as ReturnType<typeof registry>;
    expect(doc.routes.map((r) => r.name)).toEqual(["batch", "chat"]);
    expect(doc.lines.find((l) => l.name === "paid-a")).toMatchObject({
      apiKeyEnv: "LINEWATCH_KEY_PAID_A",
      routes: [{ route: "chat", weight: 60 }],
    });
    expect(doc.lines.find((l) => l.name === "free-a")).toMatchObject({
      maxShare: 0.5,
      probeIntervalSec: 120,
    });
    // Header values are secrets like keys (issue 15 item 3): the API never returns them, so no export holds them.
    expect(doc.lines.find((l) => l.name === "free-a")).not.toHaveProperty("headers");
    expect(text).not.toContain("acme");
    expect(doc.samples.map((s) => s.name)).toEqual(["capital"]);
    // Into a file, and back: nothing to change.
    await okRun(["export", "-o", "exported.yaml"]);
    expect(readFileSync(join(work, "exported.yaml"), "utf8")).toBe(text);
    expect((await okRun(["apply", "-f", "exported.yaml", "--prune"])).trim()).toMatch(/^no changes/);
  });

  it("export → apply into an empty control plane reproduces the registry", async () => {
    await okRun(["lines", "drain", "free-a"]);
    await okRun(["export", "-o", "exported.yaml"]);
    const fresh = await startTestControlPlane();
    try {
      const out = await ok(["apply", "-f", "exported.yaml"], { url: fresh.url, env: { LINEWATCH_KEY_PAID_A: "sk-copied" } });
      expect(out).toContain("applied 5 changes");
      const strip = (s: string) => s.replace(/^#.*\n/gm, "");
      expect(strip(await ok(["export"], { url: fresh.url }))).toBe(strip(readFileSync(join(work, "exported.yaml"), "utf8")));
      const copied = (await (await fresh.request("/v1/lines")).json()) as { lines: LineView[] };
      expect(copied.lines.map((l) => [l.name, l.adminState, l.hasApiKey])).toEqual([
        ["free-a", "drained", false],
        ["paid-a", "active", true],
      ]);
      expect((await ok(["apply", "-f", "exported.yaml"], { url: fresh.url })).trim()).toMatch(/^no changes/);
    } finally {
      await fresh.stop();
    }
  });

  it("leaves a drain done by hand alone when the file does not say adminState", async () => {
    await okRun(["lines", "drain", "paid-a"]);
    expect((await okRun(["apply", "-f", "registry.yaml"])).trim()).toMatch(/^no changes/);
    const withState = registry();
    (withState.lines[0] as Record<string, unknown>).adminState = "active";
    expect(await okRun(["apply", "-f", writeFile("active.yaml", withState)])).toContain('adminState: "drained" → "active"');
  });
});

describe("tokens", () => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane();
  }, 60_000);
  afterAll(async () => {
    await cp?.stop();
  });

  it("create (printed once), then the API needs it; list; revoke", async () => {
    const created = await cli(["tokens", "create", "ops", "--role", "admin"], { url: cp.url });
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^lw_admin_/);
    expect(created.stderr).toContain("shown only this once");

    const denied = await cli(["lines", "list"], { url: cp.url });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain("--token or set LINEWATCH_TOKEN");
    await ok(["lines", "list"], { url: cp.url, env: { LINEWATCH_TOKEN: token } });
    await ok(["lines", "list", "--token", token], { url: cp.url });

    const viewer = await okJson<{ token: string; role: string }>(["tokens", "create", "dash", "--role", "viewer"], {
      url: cp.url,
      env: { LINEWATCH_TOKEN: token },
    });
    expect(viewer.role).toBe("viewer");
    const forbidden = await cli(["routes", "add", "x"], { url: cp.url, env: { LINEWATCH_TOKEN: viewer.token } });
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toContain("viewer");

    const list = await ok(["tokens", "list"], { url: cp.url, env: { LINEWATCH_TOKEN: token } });
    expect(list).toMatch(/ops\s+admin/);
    expect(list).not.toContain(token);
    expect(await ok(["tokens", "revoke", "dash"], { url: cp.url, env: { LINEWATCH_TOKEN: token } })).toContain("revoked token dash");
    expect((await cli(["lines", "list"], { url: cp.url, env: { LINEWATCH_TOKEN: viewer.token } })).code).toBe(1);
  });
});

describe("webhooks (issue 26)", () => {
  let cp: TestControlPlane;
  let receiver: WebhookReceiver;
  const SECRET_ENV = { HOOK_SECRET: "whsec-cli-0123456789abcdef" };
  const okRun = (args: string[], env: Record<string, string> = {}) => ok(args, { url: cp.url, env });
  const run = (args: string[], env: Record<string, string> = {}) => cli(args, { url: cp.url, env });
  const sinks = async () =>
    ((await (await cp.request("/v1/webhooks")).json()) as { webhooks: { name: string; url: string; format: string; events: string[] }[] })
      .webhooks;

  beforeAll(async () => {
    cp = await startTestControlPlane();
    receiver = await startWebhookReceiver();
    expect((await cp.request("/v1/routes", { method: "POST", json: { name: "chat" } })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await cp?.stop();
    await receiver?.close();
  });

  it("add (secret from the environment, never printed) / list / show / test / rm", async () => {
    const added = await okRun(
      [
        "webhooks",
        "add",
        "oncall",
        "--endpoint",
        receiver.url,
        "--event",
        "state_change,trend_alert",
        "--route",
        "chat",
        "--secret-env",
        "HOOK_SECRET",
      ],
      SECRET_ENV,
    );
    expect(added).toContain(`registered webhook oncall (json, state_change,trend_alert) → ${receiver.url}`);
    const list = await okRun(["webhooks", "list"]);
    expect(list).toMatch(/^NAME\s+FORMAT\s+EVENTS\s+ROUTES\s+PENDING\s+DELIVERED\s+DEAD\s+LAST ERROR\s+URL$/m);
    expect(list).toMatch(/oncall\s+json\s+state_change,trend_alert\s+chat\s+0\s+0\s+0\s+-\s+http/);
    expect(await okRun(["webhooks", "show", "oncall"])).toMatch(/dead letters\s+0/);
    expect(await okRun(["webhooks", "test", "oncall"])).toMatch(/^webhook oncall: delivered \(HTTP 200, \d+ ms\)/);
    expect(receiver.received).toHaveLength(1);
    for (const out of [added, list]) expect(out).not.toContain(SECRET_ENV.HOOK_SECRET);

    // Refusals name the field and the option that fed it; a missing variable is caught before the API.
    const bad = await run(["webhooks", "add", "meta", "--endpoint", "http://169.254.169.254/", "--secret-env", "HOOK_SECRET"], SECRET_ENV);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/url: .*metadata.*\(--endpoint\)/);
    const format = await run(
      ["webhooks", "add", "x", "--endpoint", receiver.url, "--format", "xml", "--secret-env", "HOOK_SECRET"],
      SECRET_ENV,
    );
    expect(format.code).toBe(1);
    expect(format.stderr).toContain("(--format)");
    const unset = await run(["webhooks", "add", "x", "--endpoint", receiver.url, "--secret-env", "NOPE"]);
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain("--secret-env: the environment variable NOPE is not set");
    expect((await run(["webhooks", "add", "x", "--endpoint", receiver.url])).code).toBe(2);

    // A receiver that is not there: the test says why, exit 1.
    await okRun(["webhooks", "add", "gone", "--endpoint", "http://127.0.0.1:9/hook", "--secret-env", "HOOK_SECRET"], SECRET_ENV);
    const gone = await run(["webhooks", "test", "gone"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/webhook gone: the test delivery failed: .*ECONNREFUSED/);
    expect(await okRun(["webhooks", "rm", "gone"])).toBe("deleted webhook gone\n");
    expect((await run(["webhooks", "rm", "gone"])).code).toBe(1);
    expect((await sinks()).map((w) => w.name)).toEqual(["oncall"]);
    expect(await okRun(["webhooks", "rm", "oncall"])).toBe("deleted webhook oncall\n");
  });

  it("apply creates, changes and (with --prune) deletes sinks; secrets come from the environment, export names them", async () => {
    const file = (hooks: Record<string, unknown>[]) =>
      writeFile("hooks.yaml", { webhooks: hooks.map((h) => ({ name: "oncall", url: receiver.url, secretEnv: "HOOK_SECRET", ...h })) });
    const plan = await okRun(["apply", "-f", file([{ events: ["state_change"] }]), "--dry-run"], SECRET_ENV);
    expect(plan).toContain(`+ webhook oncall (json, ${receiver.url}, secret from $HOOK_SECRET)`);
    expect(plan).not.toContain(SECRET_ENV.HOOK_SECRET);
    expect(await okRun(["apply", "-f", "hooks.yaml"], SECRET_ENV)).toContain("applied 1 change");
    // Again: nothing to do, and the secret is not needed.
    expect((await okRun(["apply", "-f", "hooks.yaml"])).trim()).toMatch(/^no changes/);

    const changed = await okRun(["apply", "-f", file([{ events: ["state_change", "table_mode"], format: "slack", routes: ["chat"] }])]);
    expect(changed).toContain("~ webhook oncall");
    expect(changed).toContain('format: "json" → "slack"');
    expect((await sinks())[0]).toMatchObject({ format: "slack", events: ["state_change", "table_mode"] });
    // A rotation: --update-keys sends the secret again.
    const rotated = await okRun(["apply", "-f", "hooks.yaml", "--update-keys"], { HOOK_SECRET: `${SECRET_ENV.HOOK_SECRET}-2` });
    expect(rotated).toContain("secret: (set) → $HOOK_SECRET");
    expect(rotated).not.toContain(SECRET_ENV.HOOK_SECRET);

    const text = await okRun(["export"]);
    const doc = parse(text) as { webhooks: Record<string, unknown>[] };
    expect(doc.webhooks).toEqual([
      {
        name: "oncall",
        url: receiver.url,
        events: ["state_change", "table_mode"],
        routes: ["chat"],
        format: "slack",
        secretEnv: "LINEWATCH_WEBHOOK_SECRET_ONCALL",
      },
    ]);
    expect(text).not.toContain("whsec-");

    // Refused before anything changes: a literal secret, a new sink without its variable, an unknown route.
    const literal = await run([
      "apply",
      "-f",
      writeFile("literal-hook.yaml", { webhooks: [{ name: "x", url: receiver.url, secret: "whsec-in-git-000000" }] }),
    ]);
    expect(literal.code).toBe(1);
    expect(literal.stderr).toContain("webhooks[0].secret");
    const noEnv = await run(["apply", "-f", writeFile("noenv-hook.yaml", { webhooks: [{ name: "new", url: receiver.url }] })]);
    expect(noEnv.code).toBe(1);
    expect(noEnv.stderr).toContain("webhooks[0].secretEnv: a new webhook needs its signing secret");
    const route = await run(
      [
        "apply",
        "-f",
        writeFile("route-hook.yaml", { webhooks: [{ name: "new", url: receiver.url, routes: ["nowhere"], secretEnv: "HOOK_SECRET" }] }),
      ],
      SECRET_ENV,
    );
    expect(route.code).toBe(1);
    expect(route.stderr).toContain('webhooks[0].routes[0]: no route "nowhere"');
    const kind = await run([
      "apply",
      "-f",
      writeFile("kind-hook.yaml", { webhooks: [{ name: "new", url: receiver.url, events: ["nope"] }] }),
    ]);
    expect(kind.code).toBe(1);
    expect(kind.stderr).toContain("webhooks[0].events[0]");
    expect((await sinks()).map((w) => w.name)).toEqual(["oncall"]);

    // --prune with a webhooks: section deletes the sinks it does not list; a file without one leaves them.
    expect((await okRun(["apply", "-f", writeFile("routes-only.yaml", { routes: [{ name: "chat" }] }), "--prune"])).trim()).toMatch(
      /^no changes/,
    );
    expect(await okRun(["apply", "-f", writeFile("no-hooks.yaml", { webhooks: [] }), "--prune"])).toContain("- webhook oncall");
    expect(await sinks()).toEqual([]);
  });
});
