// Router overhead benchmark: one run, one lab upstream on 127.0.0.1, every proxy in its own
// process so CPU per request is that process's own (/proc/<pid>/stat). Bounded in count and time.
//
//   npx tsx bench/router-overhead/run.ts [--slices 8] [--no-portkey] [--quick] [--json out.json]
//        [--targets router,router-nocheck,hono,bare-undici] [--scenarios 1,32,sse,messages-sse,responses] [--no-pick]
//        [--before main=/path/to/a/checkout …] [--tsx]
//
// The machine may be shared: targets are measured in short slices taken in turn (rotating the
// order), so background load falls on all of them alike; ratios are medians of the ratios of
// slices taken back to back.
//
// Scenarios: chat completions (1 connection, 32 connections, SSE over 16), Anthropic `/v1/messages`
// streamed over 16 connections, OpenAI `/v1/responses` over 32: every protocol against the same bare
// proxy in the same run.
//
// Targets: direct to the upstream · apps/router (its real main.ts, tables from a stand-in
// control plane), with the in-band check off, and through Hono · a minimal node:http keep-alive
// proxy (the floor) · on request: the same minimal proxy on undici's dispatch (bare-undici), and
// the router of another checkout (--before label=dir: a copy of the repo at the commit before a
// change, with node_modules linked, for before/after in one run) · the Portkey gateway, installed
// into bench/.vendor at bench time when it installs (never a product dependency).
//
// bench/router-overhead/profile.ts loads one target alone, for --cpu-prof, --trace-gc and strace -c.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { mulberry32 } from "@linewatch/core";
import { createWeightedPicker, type RouteTable } from "@linewatch/router-client";
import { Pool } from "undici";
import { benchArgs } from "../args";
import { nodeArgsFor } from "../bundle";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const vendor = join(root, "bench/.vendor");
const portkeyEntry = join(vendor, "node_modules/@portkey-ai/gateway/build/start-server.js");
const PORTKEY_VERSION = "1.15.2";

const args = benchArgs(import.meta.url, {
  slices: { type: "string", default: "8" },
  "no-portkey": { type: "boolean", default: false },
  "no-pick": { type: "boolean", default: false },
  quick: { type: "boolean", default: false },
  json: { type: "string" },
  /** Comma-separated: router, router-nocheck, hono, bare-undici (direct and bare always run). */
  targets: { type: "string" },
  /** Scenarios to run, comma-separated: 1, 32, sse, messages-sse, responses (default all). */
  scenarios: { type: "string", default: "1,32,sse,messages-sse,responses" },
  /** `label=dir`, repeatable: a checkout of the repo (with node_modules) whose router runs as "apps/router at label". */
  before: { type: "string", multiple: true },
  /** Run every TypeScript target through tsx (as before) instead of from an esbuild bundle (as npm start runs the router). */
  tsx: { type: "boolean", default: false },
});
const quick = args.quick ?? false;
const DEFAULT_TARGETS = "router,router-nocheck,hono";
const slices = quick ? 3 : Math.max(2, Math.min(30, Number(args.slices)));

// ---- processes ------------------------------------------------------------------------
const children: ChildProcess[] = [];
const stopAll = () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
};
process.on("exit", stopAll);
process.on("SIGINT", () => {
  stopAll();
  process.exit(130);
});

function spawnProcess(
  cmd: string,
  argv: string[],
  env: Record<string, string>,
  name: string,
): { child: ChildProcess; ready: Promise<string> } {
  const child = spawn(cmd, argv, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err = (err + d.toString()).slice(-4000);
  });
  const ready = new Promise<string>((res, rej) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /READY (\S+)/.exec(out);
      if (m) res(m[1] as string);
    });
    child.once("exit", (code) => rej(new Error(`${name} exited (${code}) before it was ready: ${err}`)));
  });
  return { child, ready };
}

/** A TypeScript target as its npm start runs it (bench/bundle.ts), or through tsx with --tsx. */
const spawnTs = (file: string, env: Record<string, string>, name: string) =>
  spawnProcess(process.execPath, nodeArgsFor(file, { tsx: args.tsx }), env, name);

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function waitHttp(url: string, ok: (status: number) => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (ok(res.status)) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CLK_TCK = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
/** user + system CPU of a process (all its threads), ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

// ---- a stand-in control plane for the router: one table, ETag, long-poll, outcome reports ----
/** Outcome reports the routers pushed during the run. */
let reports = 0;
function startTables(table: RouteTable): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const etag = `"${table.version}"`;
    if (url.pathname === `/v1/tables/${table.route}`) {
      const send = () => {
        if (req.headers["if-none-match"] === etag) {
          res.writeHead(304, { etag });
          res.end();
        } else {
          res.writeHead(200, { "content-type": "application/json", etag });
          res.end(JSON.stringify(table));
        }
      };
      const wait = Number(url.searchParams.get("waitSec") ?? 0);
      if (req.headers["if-none-match"] === etag && wait > 0) {
        const t = setTimeout(send, wait * 1000);
        res.on("close", () => clearTimeout(t));
      } else send();
      return;
    }
    if (url.pathname === "/v1/tables") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ tables: [table] }));
      return;
    }
    if (url.pathname === "/v1/outcomes" && req.method === "POST") {
      // The routers' outcome reports (docs/live-evidence.md): taken and dropped, so pushing them is part of the cost.
      reports += 1;
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"stored":1,"duplicate":false}');
      });
      return;
    }
    res.writeHead(404);
    res.end();
  });
  return new Promise((r) => server.listen(0, "127.0.0.1", () => r(server)));
}

// ---- load ---------------------------------------------------------------------------
interface Target {
  name: string;
  origin: string;
  prefix: string;
  headers: Record<string, string>;
  model: string;
  pid: number | null;
  streams: boolean;
  note?: string;
}

interface Scenario {
  name: string;
  connections: number;
  stream: boolean;
  warmup: { ms?: number; count?: number };
  /** One slice of one target. */
  slice: { ms?: number; count?: number };
  /** The request of the scenario's protocol (default: chat completions). */
  request?: ScenarioRequest;
}

interface ScenarioRequest {
  /** After `/v1`. */
  path: string;
  body(model: string): string;
  /** What a client of the protocol sends besides the body. */
  headers: Record<string, string>;
  /** A 200 whose body ends the way the protocol ends a whole answer. */
  complete(text: string): boolean;
}

const CHAT: ScenarioRequest = {
  path: "/chat/completions",
  body: (model) => JSON.stringify({ model, messages, max_tokens: 64 }),
  headers: {},
  complete: () => true,
};

/** One slice: raw sums, so slices add up. */
interface Slice {
  requests: number;
  errors: number;
  seconds: number;
  cpuMs: number | null;
  latencies: number[];
}

const messages = [{ role: "user", content: "In one sentence, what does a reverse proxy do?" }];

const pools = new Map<string, Pool>();
function poolFor(target: Target, connections: number): Pool {
  const key = `${target.name}\u0000${connections}`;
  let pool = pools.get(key);
  if (pool === undefined) {
    pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
    pools.set(key, pool);
  }
  return pool;
}

const MESSAGES_SSE: ScenarioRequest = {
  path: "/messages",
  body: (model) => JSON.stringify({ model, max_tokens: 64, messages, stream: true }),
  headers: { "anthropic-version": "2026-10-21" },
  complete: (text) => text.includes("message_stop"),
};
const RESPONSES: ScenarioRequest = {
  path: "/responses",
  body: (model) => JSON.stringify({ model, input: messages[0]?.content, max_output_tokens: 64 }),
  headers: {},
  complete: (text) => text.includes('"status":"completed"'),
};

async function load(target: Target, s: Scenario, limit: { ms?: number; count?: number }): Promise<Slice> {
  const { connections, stream } = s;
  const pool = poolFor(target, connections);
  const request = s.request ?? CHAT;
  const body = s.request
    ? request.body(target.model)
    : JSON.stringify({ model: target.model, messages, max_tokens: 64, ...(stream ? { stream: true } : {}) });
  const headers = { "content-type": "application/json", ...request.headers, ...target.headers };
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const maxMs = Math.min(limit.ms ?? 30_000, 30_000);
  const maxCount = Math.min(limit.count ?? 100_000, 100_000);
  const t0 = performance.now();
  const cpu0 = target.pid !== null ? cpuMs(target.pid) : 0;
  const worker = async () => {
    while (sent < maxCount && performance.now() - t0 < maxMs) {
      sent++;
      const t = performance.now();
      try {
        const res = await pool.request({ path: `${target.prefix}${request.path}`, method: "POST", headers, body });
        const text = await res.body.text();
        if (res.statusCode !== 200 || (stream && !s.request && !text.includes("[DONE]")) || !request.complete(text)) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = target.pid !== null ? cpuMs(target.pid) - cpu0 : null;
  return { requests: latencies.length, errors, seconds, cpuMs: cpu, latencies };
}

interface Summary {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerReq: number | null;
}

function summarise(parts: Slice[]): Summary {
  const requests = parts.reduce((a, p) => a + p.requests, 0);
  const seconds = parts.reduce((a, p) => a + p.seconds, 0);
  const cpus = parts.map((p) => p.cpuMs);
  const cpu = cpus.every((c) => c !== null) ? (cpus as number[]).reduce((a, c) => a + c, 0) : null;
  const lat = parts.flatMap((p) => p.latencies).sort((a, b) => a - b);
  const q = (x: number) => lat[Math.min(lat.length - 1, Math.floor(x * lat.length))] ?? Number.NaN;
  return {
    requests,
    errors: parts.reduce((a, p) => a + p.errors, 0),
    rps: requests / seconds,
    p50: q(0.5),
    p99: q(0.99),
    cpuUsPerReq: cpu === null || requests === 0 ? null : (cpu * 1000) / requests,
  };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : (s[Math.floor(s.length / 2)] as number);
};

// ---- pick() ns/op --------------------------------------------------------------------
function benchPick(): { lines: number; build: number; weighted: number; exclude: number; affinityCold: number; affinityWarm: number }[] {
  const out = [];
  for (const n of [10, 100, 1000]) {
    const r = mulberry32(n);
    const raw = Array.from({ length: n }, () => 1 + r());
    const sum = raw.reduce((a, b) => a + b, 0);
    const lines = raw.map((w, i) => ({ id: `line-${i}`, weight: Math.max(1, Math.round((w / sum) * 10000)) }));
    // CPU time of this thread, not wall time: other processes on the machine don't inflate it.
    const timeIt = (fn: (i: number) => unknown, budgetMs: number): number => {
      let iters = 0;
      let sink = 0;
      const c0 = process.cpuUsage();
      let cpu = 0;
      while (cpu < budgetMs * 1000) {
        for (let k = 0; k < 1000; k++) sink += fn(iters++) === null ? 1 : 0;
        const c = process.cpuUsage(c0);
        cpu = c.user + c.system;
      }
      if (sink < 0) console.log(sink);
      return (cpu * 1000) / iters;
    };
    const budget = quick ? 100 : 400;
    const build = timeIt(() => createWeightedPicker(lines), budget / 2);
    const picker = createWeightedPicker(lines);
    const rng = mulberry32(1);
    // 16384 keys cycle through the picker's 4096-key memory (every pick computes); 1024 stay in it.
    const keys = Array.from({ length: 16384 }, (_, i) => `session-${i}-${i * 7919}`);
    timeIt(() => picker.pick(rng), budget / 4); // warm up
    const weighted = timeIt(() => picker.pick(rng), budget);
    const exclude = [lines[0]?.id ?? ""];
    const excl = timeIt(() => picker.pick(rng, { exclude }), budget);
    const affinityCold = timeIt((i) => picker.pick(rng, { affinityKey: keys[i & 16383] }), budget);
    const affinityWarm = timeIt((i) => picker.pick(rng, { affinityKey: keys[i & 1023] }), budget);
    out.push({ lines: n, build, weighted, exclude: excl, affinityCold, affinityWarm });
  }
  return out;
}

// ---- main ---------------------------------------------------------------------------
async function ensurePortkey(): Promise<string | null> {
  if (args["no-portkey"]) return "skipped (--no-portkey)";
  if (existsSync(portkeyEntry)) return null;
  mkdirSync(vendor, { recursive: true });
  if (!existsSync(join(vendor, "package.json"))) {
    writeFileSync(join(vendor, "package.json"), `${JSON.stringify({ name: "linewatch-bench-vendor", private: true })}\n`);
  }
  try {
    console.error(`installing @portkey-ai/gateway@${PORTKEY_VERSION} into bench/.vendor …`);
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "-E", `@portkey-ai/gateway@${PORTKEY_VERSION}`], {
      cwd: vendor,
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 300_000,
    });
    return existsSync(portkeyEntry) ? null : "skipped (installed, but build/start-server.js is missing)";
  } catch (e) {
    return `skipped (npm install failed: ${String((e as Error).message).split("\n")[0]})`;
  }
}

async function main() {
  const started = Date.now();
  const loadStart = (await import("node:os")).loadavg();
  const portkeyNote = await ensurePortkey();

  const upstream = spawnTs("bench/router-overhead/upstream.ts", {}, "upstream");
  const upstreamBase = await upstream.ready;
  const upstreamUrl = new URL(upstreamBase);

  const tables = await startTables({
    route: "bench",
    version: 1,
    generatedAt: new Date().toISOString(),
    mode: "normal",
    lines: [
      {
        id: "line-up",
        name: "up",
        tier: "paid",
        state: "healthy",
        weight: 10000,
        protocol: "openai-chat",
        baseUrl: upstreamBase,
        model: "lab-model",
        apiKey: "sk-bench",
        headers: {},
      },
      // The same lab line again for each other protocol: a table per protocol, each at 10000.
      ...(["anthropic-messages", "openai-responses"] as const).map((protocol) => ({
        id: `line-up-${protocol}`,
        name: `up-${protocol}`,
        tier: "paid",
        state: "healthy",
        weight: 10000,
        protocol,
        baseUrl: upstreamBase,
        model: "lab-model",
        apiKey: "sk-bench",
        headers: {},
      })),
    ],
  });
  const tablesUrl = `http://127.0.0.1:${(tables.address() as AddressInfo).port}`;

  // Every proxy target is a process; the direct target and the bare proxy (the baseline of every
  // ratio) always run, the others as chosen with --targets.
  const routerEnv = (port: number, extra: Record<string, string> = {}) => ({
    LINEWATCH_URL: tablesUrl,
    LINEWATCH_TOKEN: "bench",
    LINEWATCH_ROUTES: "bench",
    PORT: String(port),
    LINEWATCH_CACHE_FILE: "",
    ...extra,
  });
  interface TargetSpec {
    key: string;
    name: string;
    start: () => Promise<{ port: string; pid: number | null }>;
    model: string;
  }
  const startRouterProcess = async (file: string, env: Record<string, string>, name: string) => {
    const port = await freePort();
    const p = spawnTs(file, routerEnv(port, env), name);
    p.ready.catch(() => undefined);
    await waitHttp(`http://127.0.0.1:${port}/readyz`, (st) => st === 200);
    return { port: String(port), pid: p.child.pid ?? null };
  };
  const startBare = async (file: string, name: string) => {
    const p = spawnTs(file, { UPSTREAM_BASE: upstreamBase, UPSTREAM_KEY: "sk-bench", UPSTREAM_MODEL: "lab-model", PORT: "0" }, name);
    return { port: await p.ready, pid: p.child.pid ?? null };
  };
  const specs: TargetSpec[] = [
    { key: "bare", name: "bare node:http proxy", model: "x", start: () => startBare("bench/router-overhead/bare-proxy.ts", "bare proxy") },
    { key: "router", name: "apps/router", model: "bench", start: () => startRouterProcess("apps/router/src/main.ts", {}, "router") },
    {
      key: "router-nocheck",
      name: "apps/router, in-band check off",
      model: "bench",
      start: () => startRouterProcess("apps/router/src/main.ts", { LINEWATCH_INBAND_CHECK: "off" }, "router without the in-band check"),
    },
    {
      key: "hono",
      name: "apps/router, all routes via Hono",
      model: "bench",
      start: () => startRouterProcess("bench/router-overhead/router-hono.ts", {}, "router through Hono"),
    },
    {
      key: "bare-undici",
      name: "bare proxy on undici dispatch",
      model: "x",
      start: () => startBare("bench/router-overhead/bare-undici.ts", "bare proxy on undici"),
    },
  ];
  const chosen = new Set(["bare", ...(args.targets ?? DEFAULT_TARGETS).split(",").map((k) => k.trim())]);
  for (const entry of args.before ?? []) {
    // The router of another checkout (e.g. the commit before a change): before/after in one run.
    const eq = entry.indexOf("=");
    const label = eq === -1 ? entry : entry.slice(0, eq);
    const dir = resolve(eq === -1 ? entry : entry.slice(eq + 1));
    specs.push({
      key: `before:${label}`,
      name: `apps/router at ${label}`,
      model: "bench",
      start: () => startRouterProcess(join(dir, "apps/router/src/main.ts"), {}, `router at ${label}`),
    });
    chosen.add(`before:${label}`);
  }
  for (const k of chosen) if (!specs.some((sp) => sp.key === k)) throw new Error(`unknown target ${k}`);

  const targets: Target[] = [
    {
      name: "direct",
      origin: upstreamUrl.origin,
      prefix: upstreamUrl.pathname.replace(/\/$/, ""),
      headers: { authorization: "Bearer sk-bench" },
      model: "lab-model",
      pid: null,
      streams: true,
    },
  ];
  for (const spec of specs.filter((sp) => chosen.has(sp.key))) {
    const { port, pid } = await spec.start();
    targets.push({
      name: spec.name,
      origin: `http://127.0.0.1:${port}`,
      prefix: "/v1",
      headers: {},
      model: spec.model,
      pid,
      streams: true,
    });
  }

  let portkeyStatus = portkeyNote;
  if (portkeyNote === null) {
    const pkPort = await freePort();
    const pk = spawnProcess(process.execPath, [portkeyEntry, `--port=${pkPort}`, "--headless"], {}, "portkey");
    pk.ready.catch(() => undefined);
    try {
      await waitHttp(`http://127.0.0.1:${pkPort}/`, () => true);
      const target: Target = {
        name: `Portkey gateway ${PORTKEY_VERSION}`,
        origin: `http://127.0.0.1:${pkPort}`,
        prefix: "/v1",
        headers: { "x-portkey-provider": "openai", "x-portkey-custom-host": upstreamBase, authorization: "Bearer sk-bench" },
        model: "lab-model",
        pid: pk.child.pid ?? null,
        streams: true,
      };
      const probe = await fetch(`${target.origin}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", ...target.headers },
        body: JSON.stringify({ model: target.model, messages, stream: true }),
      });
      const probeText = await probe.text();
      if (probe.status !== 200 || !probeText.includes("[DONE]")) {
        target.streams = false;
        target.note = `stream requests fail here: HTTP ${probe.status} ${probeText.slice(0, 80)}`;
      }
      targets.push(target);
      portkeyStatus = `ran${target.note ? `; ${target.note}` : ""}`;
    } catch (e) {
      portkeyStatus = `skipped (did not start: ${(e as Error).message})`;
    }
  }

  const allScenarios: (Scenario & { key: string })[] = [
    {
      key: "1",
      name: "1 keep-alive connection, non-stream",
      connections: 1,
      stream: false,
      warmup: { count: quick ? 100 : 300 },
      slice: { count: quick ? 150 : 400 },
    },
    {
      key: "32",
      name: "32 connections, non-stream",
      connections: 32,
      stream: false,
      warmup: { ms: quick ? 300 : 800 },
      slice: { ms: quick ? 300 : 700 },
    },
    {
      key: "sse",
      name: "16 connections, SSE stream",
      connections: 16,
      stream: true,
      warmup: { ms: quick ? 300 : 800 },
      slice: { ms: quick ? 300 : 700 },
    },
  ];
  allScenarios.push(
    {
      key: "messages-sse",
      name: "16 connections, Anthropic /v1/messages SSE stream",
      connections: 16,
      stream: true,
      warmup: { ms: quick ? 300 : 800 },
      slice: { ms: quick ? 300 : 700 },
      request: MESSAGES_SSE,
    },
    {
      key: "responses",
      name: "32 connections, OpenAI /v1/responses, non-stream",
      connections: 32,
      stream: false,
      warmup: { ms: quick ? 300 : 800 },
      slice: { ms: quick ? 300 : 700 },
      request: RESPONSES,
    },
  );
  const wanted = new Set((args.scenarios ?? "").split(",").map((k) => k.trim()));
  const scenarios = allScenarios.filter((sc) => wanted.has(sc.key));

  const lines: string[] = [];
  const os = await import("node:os");
  const cpuInfo = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.+)/)?.[1] ?? "?";
  const loads: string[] = [];
  const raw: Record<string, Record<string, Slice[]>> = {};

  for (const s of scenarios) {
    // Portkey is measured on chat completions only (its Anthropic and Responses routing needs other headers).
    const active = targets.filter((t) => (!s.stream || t.streams) && (s.request === undefined || !t.name.startsWith("Portkey")));
    for (const t of active) await load(t, s, s.warmup);
    const parts = new Map<Target, Slice[]>(active.map((t) => [t, []]));
    for (let i = 0; i < slices; i++) {
      // Rotate who goes first so no target always follows the same neighbour.
      const order = active.map((_, k) => active[(k + i) % active.length] as Target);
      for (const t of order) (parts.get(t) as Slice[]).push(await load(t, s, s.slice));
    }
    loads.push(os.loadavg()[0]?.toFixed(1) ?? "?");
    raw[s.name] = Object.fromEntries([...parts].map(([t, p]) => [t.name, p]));

    const bareParts = parts.get(targets[1] as Target) as Slice[];
    const direct = summarise(parts.get(targets[0] as Target) as Slice[]);
    lines.push(`**${s.name}**`);
    lines.push("");
    lines.push("| target | req/s | p50 ms | p99 ms | proxy CPU µs/req | req/s vs bare | CPU vs bare | p50 added vs direct |");
    lines.push("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (const t of targets) {
      const p = parts.get(t);
      if (!p) {
        lines.push(`| ${t.name} | n/a | | | | | | ${t.note ?? ""} |`);
        continue;
      }
      const r = summarise(p);
      const isDirect = t === targets[0];
      // Paired: slice i of this target against slice i of the bare proxy, taken back to back.
      const rpsRatio = median(
        p.map((x, i) => x.requests / x.seconds / ((bareParts[i] as Slice).requests / (bareParts[i] as Slice).seconds || 1)),
      );
      const cpuRatios = p
        .map((x, i) =>
          x.cpuMs !== null && (bareParts[i] as Slice).cpuMs
            ? x.cpuMs / x.requests / (((bareParts[i] as Slice).cpuMs as number) / (bareParts[i] as Slice).requests)
            : null,
        )
        .filter((v): v is number => v !== null && Number.isFinite(v));
      const err = r.errors > 0 ? ` (${r.errors} errors)` : "";
      lines.push(
        `| ${t.name}${err} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ${r.cpuUsPerReq?.toFixed(1) ?? "—"} | ${isDirect ? "" : `${(rpsRatio * 100).toFixed(0)}%`} | ${isDirect || cpuRatios.length === 0 ? "" : `${median(cpuRatios).toFixed(2)}×`} | ${isDirect ? "" : `${(r.p50 - direct.p50).toFixed(3)} ms`} |`,
      );
      console.error(
        `${s.name} · ${t.name}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(3)} ms, CPU ${r.cpuUsPerReq?.toFixed(1) ?? "—"} µs/req`,
      );
    }
    lines.push("");
  }
  lines.unshift(
    `Run ${new Date(started).toISOString()} · Node ${process.version} · ${cpuInfo.trim()} · ${os.cpus().length} CPUs · ${slices} slices per target, taken in turn · load average ${loadStart[0]?.toFixed(1)} at start, ${loads.join(" / ")} after each scenario · Portkey: ${portkeyStatus} · outcome reports pushed by the routers: ${reports}`,
    "",
  );
  const picks = args["no-pick"] ? [] : benchPick();
  lines.push("**pick() ns/op** (seeded rng; affinity = weighted rendezvous over every line)");
  lines.push("");
  lines.push("| lines | build picker µs | pick | pick, 1 excluded | affinity key, new | affinity key, recent |");
  lines.push("|---:|---:|---:|---:|---:|---:|");
  for (const p of picks) {
    lines.push(
      `| ${p.lines} | ${(p.build / 1000).toFixed(1)} | ${p.weighted.toFixed(0)} | ${p.exclude.toFixed(0)} | ${p.affinityCold.toFixed(0)} | ${p.affinityWarm.toFixed(0)} |`,
    );
  }
  lines.push("");
  lines.push(`Wall time ${((Date.now() - started) / 1000).toFixed(0)} s.`);
  console.log(lines.join("\n"));
  if (args.json) {
    const compact = Object.fromEntries(
      Object.entries(raw).map(([sc, byT]) => [
        sc,
        Object.fromEntries(Object.entries(byT).map(([t, ps]) => [t, ps.map(({ latencies: _l, ...rest }) => rest)])),
      ]),
    );
    writeFileSync(args.json, JSON.stringify({ slices: compact, picks }, null, 2));
  }
  for (const pool of pools.values()) await pool.close();

  tables.close();
  tables.closeAllConnections();
  stopAll();
}

const deadline = setTimeout(() => {
  console.error("benchmark exceeded 15 minutes; stopping");
  stopAll();
  process.exit(1);
}, 15 * 60_000);
deadline.unref();
main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    stopAll();
    process.exit(1);
  },
);
