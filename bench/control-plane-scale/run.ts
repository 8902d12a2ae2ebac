// Control-plane scale: what one control plane answers and holds, and what a second replica adds.
// Every figure comes with a baseline measured in the same run. 127.0.0.1 only; every part is
// bounded in count and time (about 6 minutes in all; --quick about 3).
//
//   npx tsx bench/control-plane-scale/run.ts [options]
//
//    --parts LIST           tables,longpoll,publish,replicas (default: all four)
//    --db postgres|pglite   PostgreSQL at DATABASE_URL (default) or embedded PGlite (parts 1–3)
//    --quick                shorter windows, one round
//    --json FILE            also write the figures as JSON
//    --waiters N            long-polling routers in part 2 (default 1000, at most 5000)
//    --publish-lines N      lines in part 3 (default 10000)
//    --publish-routes N     routes in part 3 (default 100)
//    --publish-rounds N     part 3's three change steps this many times, medians printed (default 3; --quick 1)
//    --replica-lines N      lab lines in part 4's first scenario (default 400)
//    --max-in-flight N      LINEWATCH_MAX_IN_FLIGHT in part 4's first scenario (default 32)
//    --cpu-prof DIR         write a CPU profile of each control-plane child process into DIR (node --cpu-prof)
//    --tsx                  run the control-plane children through tsx instead of from a bundle (as npm start runs it)
//
// 1. tables    table endpoint answers/s: 200 with a router token (credentials added per request),
//              200 with a viewer token, 304 (If-None-Match), next to GET /healthz on the same process;
//              and the floor: a bare node:http server (floor.ts) answering the table's bytes, with and
//              without the token check, next to 15 B.
// 2. longpoll  1000 routers long-polling (?waitSec=60): RSS and heap of the control-plane process
//              before and while they wait, and how fast all 1000 wake on one publish.
// 3. publish   recompute + publish the tables of 100 routes over 10,000 lines (in this process), next
//              to core's computeTable alone on the same members.
// 4. replicas  probes/s with two replicas vs one, on one PostgreSQL: lab lines answering at once
//              (CPU-bound) and answering in 500 ms (bound by each replica's in-flight slots).
//
// Databases: PostgreSQL at DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), in a
// database the run creates and drops; --db pglite runs parts 1–3 on embedded PGlite (part 4 needs
// PostgreSQL: replicas share it). The control plane of parts 1, 2 and 4 is the real main.ts in a
// child process (bench/control-plane-scale/serve.ts adds a memory probe over IPC).

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { computeTable, initialHealth, type TableMember } from "@linewatch/core";
import {
  createDb,
  type Database,
  ensureLinesHealth,
  executeRows,
  lines as linesTable,
  routeLines,
  routes as routesTable,
} from "@linewatch/db";
import { type Lab, startLab } from "@linewatch/lab";
import { sql } from "drizzle-orm";
import { Pool } from "undici";
import { loadConfig } from "../../apps/control-plane/src/config";
import { silentLogger } from "../../apps/control-plane/src/logger";
import { RegistryCache } from "../../apps/control-plane/src/registry-cache";
import { createSecretBox } from "../../apps/control-plane/src/secrets";
import { TablePublisher } from "../../apps/control-plane/src/tables/publisher";
import { benchArgs } from "../args";
import { nodeArgsFor } from "../bundle";
import { controlPlaneMemory, controlPlaneRequest, controlPlaneUrl, stopControlPlane } from "../control-plane-process";
import { scratchDatabase } from "../scratch-database";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");

const args = benchArgs(import.meta.url, {
  quick: { type: "boolean", default: false },
  db: { type: "string", default: "postgres" },
  parts: { type: "string", default: "tables,longpoll,publish,replicas" },
  json: { type: "string" },
  waiters: { type: "string", default: "1000" },
  "publish-lines": { type: "string", default: "10000" },
  "publish-routes": { type: "string", default: "100" },
  "publish-rounds": { type: "string" },
  "replica-lines": { type: "string", default: "400" },
  "max-in-flight": { type: "string", default: "32" },
  "cpu-prof": { type: "string" },
  tsx: { type: "boolean", default: false },
});
const quick = args.quick ?? false;
const parts = new Set((args.parts ?? "").split(","));
const usePg = args.db !== "pglite";
const pgBase = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const SECRET_KEY = randomBytes(32).toString("hex");
const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString("hex")}`;
const SLICES = quick ? 2 : 8;
const SLICE_MS = 1500;
const CONNECTIONS = 16;

const results: Record<string, unknown> = {
  machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg().map((l) => Math.round(l * 10) / 10), node: process.version },
  db: usePg ? "postgres" : "pglite",
};
const out = (s: string) => process.stdout.write(`${s}\n`);

// ---- databases -------------------------------------------------------------------------------
const cleanups: (() => Promise<void>)[] = [];

/** A fresh database: its URL (PostgreSQL) or data directory (PGlite). */
async function freshDatabase(): Promise<{ env: Record<string, string>; open(): Promise<Database> }> {
  const db = await scratchDatabase({ pgBase: usePg ? pgBase : null, prefix: "lw_bench" });
  cleanups.push(db.drop);
  if (db.kind === "postgres") return { env: { DATABASE_URL: db.url }, open: () => createDb({ url: db.url, maxConnections: 5 }) };
  return { env: { LINEWATCH_DATA_DIR: db.dataDir }, open: () => createDb({ dataDir: db.dataDir }) };
}

// ---- control-plane processes -------------------------------------------------------------------
interface Child {
  url: string;
  pid: number;
  proc: ChildProcess;
  mem(): Promise<{ rss: number; heapUsed: number; sockets: number }>;
  stop(): Promise<void>;
}
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

async function startChild(env: Record<string, string>): Promise<Child> {
  const profile = args["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", resolve(args["cpu-prof"])] : [];
  const proc = spawn(process.execPath, [...profile, "--expose-gc", ...nodeArgsFor(join(here, "serve.ts"), { tsx: args.tsx })], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? tmpdir(),
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "warn",
      LINEWATCH_SECRET_KEY: SECRET_KEY,
      LINEWATCH_ADMIN_TOKEN: ADMIN_TOKEN,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  children.add(proc);
  const url = await controlPlaneUrl(proc, 120_000);
  const mem = () => controlPlaneMemory(proc);
  const stop = async () => {
    await stopControlPlane(proc);
    children.delete(proc);
  };
  return { url, pid: proc.pid!, proc, mem, stop };
}

/** floor.ts in its own process (bundled as the control plane is), answering the table's `body` at /table and, after checking `token`, at /table-checked. */
async function startFloor(answer: { body: string; etag: string; token: string }): Promise<{ url: string; pid: number; stop(): void }> {
  const proc = spawn(process.execPath, nodeArgsFor(join(here, "floor.ts"), { tsx: args.tsx }), {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  children.add(proc);
  const port = await new Promise<number>((res, rej) => {
    proc.once("message", (m: { port: number }) => res(m.port));
    proc.once("exit", (code) => rej(new Error(`floor.ts exited with ${code}`)));
    proc.send(answer);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: proc.pid!,
    stop: () => {
      proc.kill("SIGTERM");
      children.delete(proc);
    },
  };
}

function api(url: string, path: string, init: { method?: string; json?: unknown; token?: string } = {}): Promise<Response> {
  return controlPlaneRequest(url, path, { ...init, token: init.token ?? ADMIN_TOKEN });
}

const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, at 100 ticks/s
};

/** Busy and total jiffies of the whole machine (/proc/stat), to tell a saturated machine from an idle one. */
const machineJiffies = () => {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
};

/** CPU ms of each PostgreSQL server process on this machine, by pid (every database's: others' too). */
const postgresCpuMs = () => {
  const byPid = new Map<string, number>();
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes("(postgres)")) continue;
      const f = stat.split(") ")[1]!.split(" ");
      byPid.set(pid, ((Number(f[11]) + Number(f[12])) * 1000) / 100);
    } catch {
      // the process ended meanwhile
    }
  }
  return byPid;
};

// ---- load -------------------------------------------------------------------------------------
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

interface Slice {
  lat: number[];
  seconds: number;
  cpuMs: number;
}

/** One slice of closed-loop load: `CONNECTIONS` keep-alive connections, each sending the next request when the last is answered. */
async function slice(pool: Pool, pid: number, path: string, headers: Record<string, string>, expect: number, ms: number): Promise<Slice> {
  const lat: number[] = [];
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  const deadline = t0 + ms;
  let wrong = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now();
        const res = await pool.request({ path, method: "GET", headers });
        await res.body.dump();
        if (res.statusCode !== expect) wrong++;
        lat.push(performance.now() - t);
      }
    }),
  );
  if (wrong > 0) throw new Error(`${path}: ${wrong} answers were not ${expect}`);
  return { lat, seconds: (performance.now() - t0) / 1000, cpuMs: cpuMs(pid) - cpu0 };
}

// ---- 1 + 2: table endpoint and long-polls -----------------------------------------------------------
async function seedRoute(url: string, lines: number): Promise<{ lineIds: string[] }> {
  await api(url, "/v1/routes", { method: "POST", json: { name: "chat" } });
  const lineIds: string[] = [];
  for (let i = 0; i < lines; i++) {
    const res = await api(url, "/v1/lines", {
      method: "POST",
      json: {
        name: `line-${i}`,
        tier: i < 2 ? "free" : "paid",
        protocol: "openai-chat",
        baseUrl: `http://127.0.0.1:9/v${i}`,
        model: "m",
        apiKey: `sk-bench-${i}-${randomBytes(8).toString("hex")}`,
        routes: [{ route: "chat", weight: 10 + i }],
      },
    });
    lineIds.push(((await res.json()) as { id: string }).id);
  }
  return { lineIds };
}

async function tablesAndLongPolls() {
  const db = await freshDatabase();
  // No scheduler: nothing but the benchmark's own requests moves the tables.
  const cp = await startChild({ ...db.env, LINEWATCH_SCHEDULER: "false", LINEWATCH_SHIPPED_SAMPLES: "false" });
  try {
    const { lineIds } = await seedRoute(cp.url, 10);
    const token = async (role: string) =>
      ((await (await api(cp.url, "/v1/tokens", { method: "POST", json: { name: `bench-${role}`, role } })).json()) as { token: string })
        .token;
    const router = await token("router");
    const viewer = await token("viewer");
    const first = await fetch(`${cp.url}/v1/tables/chat`, { headers: { authorization: `Bearer ${router}` } });
    const version = (await first.json()) as { version: number; lines: unknown[] };
    const etag = first.headers.get("etag")!;

    // Warm every path once (JIT, lazy modules, first registry load), so neither part pays for it.
    const warmHeaders: Record<string, string>[] = [
      { authorization: `Bearer ${router}` },
      { authorization: `Bearer ${viewer}` },
      { authorization: `Bearer ${router}`, "if-none-match": etag },
    ];
    for (const headers of warmHeaders) {
      for (let i = 0; i < 200; i++) await (await fetch(`${cp.url}/v1/tables/chat`, { headers })).arrayBuffer();
    }
    await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${cp.url}/v1/tables/chat?waitSec=1`, { headers: { authorization: `Bearer ${router}`, "if-none-match": etag } }).then((r) =>
          r.arrayBuffer(),
        ),
      ),
    );

    if (parts.has("longpoll")) {
      const n = Math.max(1, Math.min(5000, Number(args.waiters)));
      out(`\n## longpoll: ${n} routers holding GET /v1/tables/chat?waitSec=60 with If-None-Match`);
      // Keep-alive connections of the set-up close after the server's 5 s keepAliveTimeout: wait them out,
      // so the socket count measures the waiters only.
      await new Promise((r) => setTimeout(r, 6000));
      const idle = await cp.mem();
      const pool = new Pool(cp.url, { connections: n, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 120_000 });
      let woke = 0;
      const answered: { status: number; at: number }[] = [];
      const pending: Promise<void>[] = [];
      const hold = () =>
        pool
          .request({
            path: "/v1/tables/chat?waitSec=60",
            method: "GET",
            headers: { authorization: `Bearer ${router}`, "if-none-match": etag },
          })
          .then(async (res) => {
            await res.body.dump();
            answered.push({ status: res.statusCode, at: performance.now() });
            if (res.statusCode === 200) woke++;
          });
      // Routers arrive in batches of 100 (all at once would overflow the listen backlog and time
      // out on SYN retries): each batch is held by the control plane before the next one comes.
      let held = idle;
      const rampStart = performance.now();
      for (let sent = 0; sent < n; ) {
        const batch = Math.min(100, n - sent);
        for (let k = 0; k < batch; k++) pending.push(hold());
        sent += batch;
        const deadline = performance.now() + 15_000;
        while (held.sockets - idle.sockets < sent && performance.now() < deadline) {
          await new Promise((r) => setTimeout(r, 100));
          held = await cp.mem();
        }
        if (process.env.BENCH_DEBUG)
          out(`    sent ${sent}, held ${held.sockets - idle.sockets}, ${round(performance.now() - rampStart, 0)} ms`);
      }
      const rampMs = performance.now() - rampStart;
      await new Promise((r) => setTimeout(r, 1000)); // the last handlers park
      held = await cp.mem();
      if (answered.length > 0)
        throw new Error(`${answered.length} long-polls answered before any publish: ${JSON.stringify(answered.slice(0, 5))}`);
      // One publish: a base weight changes.
      const cpu0 = cpuMs(cp.pid);
      const t0 = performance.now();
      await api(cp.url, `/v1/lines/${lineIds[0]}`, { method: "PATCH", json: { routes: [{ route: "chat", weight: 500 }] } });
      await Promise.all(pending);
      const wakeCpu = cpuMs(cp.pid) - cpu0;
      await pool.close();
      const after = await cp.mem();
      const wake = answered.map((a) => a.at - t0).sort((a, b) => a - b);
      const mb = (b: number) => round(b / 1048576, 1);
      const r = {
        waiters: n,
        socketsHeld: held.sockets - idle.sockets,
        idle: { rssMB: mb(idle.rss), heapMB: mb(idle.heapUsed) },
        holding: { rssMB: mb(held.rss), heapMB: mb(held.heapUsed) },
        perWaiterKB: { rss: round((held.rss - idle.rss) / n / 1024, 1), heap: round((held.heapUsed - idle.heapUsed) / n / 1024, 1) },
        afterWake: { rssMB: mb(after.rss), heapMB: mb(after.heapUsed) },
        woke,
        statuses: Object.fromEntries(
          [...new Set(answered.map((a) => a.status))].map((st) => [st, answered.filter((a) => a.status === st).length]),
        ),
        rampMs: round(rampMs, 0),
        wakeMs: { first: round(wake[0] ?? 0), p50: round(pct(wake, 50)), last: round(wake.at(-1) ?? 0) },
        wakeServerCpuMs: round(wakeCpu),
      };
      results.longpoll = r;
      out(`  idle:              RSS ${r.idle.rssMB} MB, heap ${r.idle.heapMB} MB (after GC)`);
      out(
        `  holding ${n}:     RSS ${r.holding.rssMB} MB, heap ${r.holding.heapMB} MB (+${r.perWaiterKB.rss} KB RSS, +${r.perWaiterKB.heap} KB heap per waiter; ${r.socketsHeld} sockets more)`,
      );
      out(`  (${n} routers connected in ${r.rampMs} ms, in batches of 100)`);
      out(
        `  one publish woke ${woke}/${n} (statuses ${JSON.stringify(r.statuses)}): first ${r.wakeMs.first} ms, median ${r.wakeMs.p50} ms, last ${r.wakeMs.last} ms after the PATCH was sent (server CPU ${r.wakeServerCpuMs} ms)`,
      );
      out(`  after:             RSS ${r.afterWake.rssMB} MB, heap ${r.afterWake.heapMB} MB`);
    }
    if (parts.has("tables")) {
      // The long-polls above published a new version.
      const etagNow = (await fetch(`${cp.url}/v1/tables/chat`, { headers: { authorization: `Bearer ${router}` } })).headers.get("etag")!;
      out(
        `\n## tables: ${SLICES} slices of ${SLICE_MS / 1000} s per case in turn, ${CONNECTIONS} keep-alive connections, route of ${version.lines.length} lines`,
      );
      // The floor: a bare node:http server (floor.ts, its own process) answering /healthz's bytes
      // and the router's table bytes, so the cost of the answer's size alone is measured beside ours.
      const routerAnswer = await fetch(`${cp.url}/v1/tables/chat`, { headers: { authorization: `Bearer ${router}` } });
      const routerBody = await routerAnswer.text();
      const floor = await startFloor({ body: routerBody, etag: routerAnswer.headers.get("etag") ?? '"0"', token: router });
      interface Case {
        name: string;
        url: string;
        pid: number;
        path: string;
        headers: Record<string, string>;
        status: number;
        /** The case its ratios are taken against (the same server's small answer). */
        base: number;
      }
      const ours = { url: cp.url, pid: cp.pid };
      const cases: Case[] = [
        { name: "GET /healthz (baseline)", ...ours, path: "/healthz", headers: {}, status: 200, base: 0 },
        {
          name: "GET /v1/tables/chat, router token → 200",
          ...ours,
          path: "/v1/tables/chat",
          headers: { authorization: `Bearer ${router}` },
          status: 200,
          base: 0,
        },
        {
          name: "GET /v1/tables/chat, viewer token → 200",
          ...ours,
          path: "/v1/tables/chat",
          headers: { authorization: `Bearer ${viewer}` },
          status: 200,
          base: 0,
        },
        {
          name: "GET /v1/tables/chat, If-None-Match → 304",
          ...ours,
          path: "/v1/tables/chat",
          headers: { authorization: `Bearer ${router}`, "if-none-match": etagNow },
          status: 304,
          base: 0,
        },
        {
          name: "floor: bare node:http, 15 B (its baseline)",
          url: floor.url,
          pid: floor.pid,
          path: "/small",
          headers: {},
          status: 200,
          base: 4,
        },
        {
          name: `floor: bare node:http, the table's ${Buffer.byteLength(routerBody)} B`,
          url: floor.url,
          pid: floor.pid,
          path: "/table",
          headers: {},
          status: 200,
          base: 4,
        },
        {
          name: "floor: the same, after the token check",
          url: floor.url,
          pid: floor.pid,
          path: "/table-checked",
          headers: { authorization: `Bearer ${router}` },
          status: 200,
          base: 4,
        },
      ];
      // Slices taken in turn, the order rotating each round, so the machine's other load falls on
      // every case alike; "vs baseline" is the median of the per-round ratios.
      const pools = cases.map((c) => new Pool(c.url, { connections: CONNECTIONS, pipelining: 1 }));
      for (const [k, c] of cases.entries()) await slice(pools[k]!, c.pid, c.path, c.headers, c.status, 1000); // warm
      const slices: Slice[][] = cases.map(() => []);
      for (let round = 0; round < SLICES; round++) {
        for (let j = 0; j < cases.length; j++) {
          const k = (j + round) % cases.length;
          const c = cases[k]!;
          slices[k]!.push(await slice(pools[k]!, c.pid, c.path, c.headers, c.status, SLICE_MS));
        }
      }
      await Promise.all(pools.map((p) => p.close()));
      floor.stop();
      const rps = (x: Slice) => x.lat.length / x.seconds;
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
      const rows = cases.map(({ name, base }, k) => {
        const mine = slices[k]!;
        const theirs = slices[base]!;
        const lat = mine.flatMap((x) => x.lat).sort((a, b) => a - b);
        const seconds = mine.reduce((a, x) => a + x.seconds, 0);
        const cpu = mine.reduce((a, x) => a + x.cpuMs, 0);
        return {
          case: name,
          rps: Math.round(lat.length / seconds),
          p50Ms: round(pct(lat, 50), 2),
          p99Ms: round(pct(lat, 99), 2),
          serverCpuMsPerReq: round(cpu / lat.length, 3),
          requests: lat.length,
          vsBaseline: round(median(mine.map((x, r) => rps(x) / rps(theirs[r]!))), 2),
          cpuVsBaseline: round(median(mine.map((x, r) => x.cpuMs / x.lat.length / (theirs[r]!.cpuMs / theirs[r]!.lat.length))), 1),
        };
      });
      for (const r of rows) {
        out(
          `  ${r.case.padEnd(44)} ${String(r.rps).padStart(6)} req/s  p50 ${r.p50Ms} ms  p99 ${r.p99Ms} ms  server CPU ${r.serverCpuMsPerReq} ms/req  (req/s ${r.vsBaseline}× baseline, CPU/req ${r.cpuVsBaseline}×)`,
        );
      }
      results.tables = rows;
    }

    void version;
  } finally {
    await cp.stop();
  }
}

// ---- 3: publish 100 routes over 10,000 lines ------------------------------------------------------
async function publishAtScale() {
  const nLines = Math.max(100, Math.min(50_000, Number(args["publish-lines"])));
  const nRoutes = Math.max(1, Math.min(1000, Number(args["publish-routes"])));
  out(
    `\n## publish: ${nRoutes} routes over ${nLines} lines (${nLines / nRoutes} lines per route), ${usePg ? "PostgreSQL" : "PGlite"}, in this process`,
  );
  const fresh = await freshDatabase();
  const database = await fresh.open();
  try {
    const secrets = createSecretBox(SECRET_KEY);
    const routeNames = Array.from({ length: nRoutes }, (_, i) => `route-${String(i).padStart(3, "0")}`);
    const t0 = performance.now();
    await database.db.insert(routesTable).values(routeNames.map((name) => ({ name })));
    for (let start = 0; start < nLines; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, nLines - start) }, (_, k) => {
        const i = start + k;
        return {
          name: `line-${String(i).padStart(5, "0")}`,
          tier: i % 5 === 0 ? "free" : "paid",
          protocol: "openai-chat",
          baseUrl: `https://upstream-${i % 50}.example.com/v1`,
          model: "m",
          apiKeyEnc: secrets.encrypt(`sk-bench-${i}`),
        };
      });
      const inserted = await database.db.insert(linesTable).values(batch).returning({ id: linesTable.id, name: linesTable.name });
      await database.db.insert(routeLines).values(
        inserted.map((row) => {
          const i = Number(row.name.slice(5));
          // Weights differ within a route (1…100), so changing them all moves every table.
          return { routeName: routeNames[i % nRoutes]!, lineId: row.id, weight: 1 + (Math.floor(i / nRoutes) % 100) };
        }),
      );
    }
    // Every line has a health row, as it does once the control plane has created it.
    const ids = executeRows<{ id: string }>(await database.db.execute(sql`select id::text as id from lines`)).map((r) => r.id);
    const at = new Date();
    for (let start = 0; start < ids.length; start += 1000) {
      await ensureLinesHealth(
        database.db,
        ids.slice(start, start + 1000).map((lineId) => ({ lineId, health: initialHealth(at.getTime()), state: "healthy", now: at })),
      );
    }
    const seedMs = performance.now() - t0;
    const config = loadConfig({ LOG_LEVEL: "silent", ...fresh.env });
    const deps = { config, database, clock: { now: () => Date.now() }, logger: silentLogger, secrets };
    const registry = new RegistryCache(deps);
    const publisher = new TablePublisher(deps, registry);
    await publisher.start();
    const time = async (fn: () => Promise<unknown>) => {
      const t = performance.now();
      await fn();
      return round(performance.now() - t, 0);
    };
    const versions = () => routeNames.reduce((n, r) => n + (publisher.view(r)?.version ?? 0), 0);

    const loadMs = await time(() => registry.get());
    const firstMs = await time(() => publisher.recompute(routeNames, { reason: "bench: first", probeIds: [] }));
    const v1 = versions();
    const unchangedMs = await time(() => publisher.recompute(routeNames, { reason: "bench: unchanged", probeIds: [] }));
    const v2 = versions();
    const rounds = Math.max(1, Math.min(20, Number(args["publish-rounds"] ?? (quick ? 1 : 3))));
    const steps = {
      unchanged: [] as number[],
      changed: [] as number[],
      changedReload: [] as number[],
      one: [] as number[],
      oneReload: [] as number[],
    };
    let changedVersions = 0;
    let oneVersions = 0;
    for (let k = 0; k < rounds; k++) {
      if (k > 0) steps.unchanged.push(await time(() => publisher.recompute(routeNames, { reason: "bench: unchanged", probeIds: [] })));
      else steps.unchanged.push(unchangedMs);
      // Every weight: an edit no single API call makes, so the registry is told "anything changed" (a whole reload).
      await database.db.execute(sql`update route_lines set weight = weight + 1`);
      registry.invalidate();
      let changedReloadMs = 0;
      const before = versions();
      steps.changed.push(
        await time(async () => {
          changedReloadMs = await time(() => registry.get());
          await publisher.recompute(routeNames, { reason: "bench: every weight changed", probeIds: [] });
        }),
      );
      steps.changedReload.push(changedReloadMs);
      changedVersions += versions() - before;
      await database.db.execute(sql`update route_lines set weight = weight + 1 where route_name = ${routeNames[0]}`);
      let oneReloadMs = 0;
      const beforeOne = versions();
      steps.one.push(
        await time(async () => {
          // What the API's change hooks tell the registry (engine.registryChanged): the routes the change touched.
          registry.invalidate({ routes: [routeNames[0]!] });
          oneReloadMs = await time(() => registry.get());
          await publisher.recompute([routeNames[0]!], { reason: "bench: one route", probeIds: [] });
        }),
      );
      steps.oneReload.push(oneReloadMs);
      oneVersions += versions() - beforeOne;
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    const changedMs = med(steps.changed);
    const oneRouteMs = med(steps.one);

    // Baseline: core's computeTable alone over the same members (what a publish cannot go below).
    const snapshot = await registry.get();
    const members = new Map<string, TableMember[]>(routeNames.map((r) => [r, []]));
    for (const l of snapshot.lines.values()) {
      for (const m of l.routes)
        members.get(m.route)?.push({
          lineId: l.id,
          name: l.name,
          tier: l.tier,
          baseWeight: m.weight,
          factor: 1,
          maxShare: l.maxShare,
          adminState: l.adminState,
        });
    }
    const pure: number[] = [];
    for (let k = 0; k < 5; k++) {
      const t = performance.now();
      for (const r of routeNames) computeTable({ route: { name: r, freeShareCap: 0.2, onAllDown: "fail-open" }, members: members.get(r)! });
      pure.push(performance.now() - t);
    }
    const pureMs = round(pure.sort((a, b) => a - b)[2]!, 2);
    await publisher.stop();
    const r = {
      lines: nLines,
      routes: nRoutes,
      seedMs: round(seedMs, 0),
      registryLoadMs: loadMs,
      firstPublishMs: firstMs,
      firstVersions: v1,
      rounds,
      unchangedRecomputeMs: med(steps.unchanged),
      unchangedNewVersions: v2 - v1,
      changedPublishMs: changedMs,
      changedRegistryReloadMs: med(steps.changedReload),
      changedNewVersions: changedVersions / rounds,
      oneRoutePublishMs: oneRouteMs,
      oneRouteRegistryReloadMs: med(steps.oneReload),
      oneRouteNewVersions: oneVersions / rounds,
      steps,
      computeTableOnlyMs: pureMs,
      changedVsComputeOnly: round(changedMs / Math.max(pureMs, 0.01), 0),
    };
    results.publish = r;
    out(`  seed (bulk insert, keys sealed): ${r.seedMs} ms`);
    out(`  registry load (${nLines} lines, keys decrypted): ${r.registryLoadMs} ms`);
    out(
      `  first publish of ${nRoutes} routes: ${r.firstPublishMs} ms (${r.firstVersions} versions; ${round(r.firstPublishMs / nRoutes, 1)} ms per route)`,
    );
    out(`  (medians of ${rounds} rounds; each round's ms in brackets)`);
    out(
      `  recompute, nothing changed: ${r.unchangedRecomputeMs} ms [${steps.unchanged.join(", ")}] (${r.unchangedNewVersions} new versions)`,
    );
    out(
      `  every weight changed (registry reload + ${nRoutes} publishes): ${r.changedPublishMs} ms [${steps.changed.join(", ")}], of which the reload ${r.changedRegistryReloadMs} ms [${steps.changedReload.join(", ")}] (${r.changedNewVersions} new versions)`,
    );
    out(
      `  one route changed (registry reload + 1 publish): ${r.oneRoutePublishMs} ms [${steps.one.join(", ")}], of which the reload ${r.oneRouteRegistryReloadMs} ms [${steps.oneReload.join(", ")}] (${r.oneRouteNewVersions} new versions)`,
    );
    out(
      `  baseline, core computeTable alone for all ${nRoutes} routes: ${r.computeTableOnlyMs} ms (publish = ${r.changedVsComputeOnly}× that)`,
    );
  } finally {
    await database.close();
  }
}

// ---- 4: probes per second, one replica vs two ---------------------------------------------------------
interface Scenario {
  name: string;
  lines: number;
  latencyMs: number;
  inFlight: number;
}

async function replicas() {
  if (!usePg) {
    out("\n## replicas: skipped (needs PostgreSQL; run without --db pglite)");
    return;
  }
  // Instant upstreams: the replicas' (and the machine's) CPU is the limit. Slow upstreams, as LLMs
  // are: each replica's in-flight slots are the limit, which is what a second replica adds to.
  const scenarios: Scenario[] = [
    {
      name: "instant upstreams",
      lines: Math.max(1, Math.min(1000, Number(args["replica-lines"]))),
      latencyMs: 0,
      inFlight: Number(args["max-in-flight"]),
    },
    { name: "upstreams answering in 500 ms", lines: 100, latencyMs: 500, inFlight: 8 },
  ];
  const windowSec = quick ? 10 : 15;
  const warmSec = 5;
  const rounds = quick ? 1 : 2;
  out(
    `\n## replicas: lab lines, probeIntervalSec 1 (demand far above capacity), ${windowSec} s window after ${warmSec} s, ${rounds} rounds of one then two replicas`,
  );
  const all: Record<string, unknown>[] = [];
  for (const sc of scenarios) {
    out(`  ${sc.name}: ${sc.lines} lines, LINEWATCH_MAX_IN_FLIGHT=${sc.inFlight}`);
    const fresh = await freshDatabase();
    const lab: Lab = await startLab({
      lines: Array.from({ length: sc.lines }, (_, i) => ({ name: `lab-${i}`, baseLatencyMs: sc.latencyMs })),
    });
    const database = await fresh.open();
    const env = { ...fresh.env, LINEWATCH_MAX_IN_FLIGHT: String(sc.inFlight) };
    try {
      // Register the lines with the scheduler off, so the first measured replica starts from zero.
      const setup = await startChild({ ...env, LINEWATCH_SCHEDULER: "false" });
      // Ten routes: a table publish holds its route's lock, so one route would serialise every replica.
      for (let r = 0; r < 10; r++) await api(setup.url, "/v1/routes", { method: "POST", json: { name: `chat-${r}` } });
      for (let i = 0; i < sc.lines; i++) {
        await api(setup.url, "/v1/lines", {
          method: "POST",
          json: {
            name: `lab-${i}`,
            tier: "paid",
            protocol: "openai-chat",
            baseUrl: lab.baseUrl(`lab-${i}`),
            model: "lab-model",
            probeIntervalSec: 1,
            routes: [{ route: `chat-${i % 10}`, weight: 1 }],
          },
        });
      }
      await setup.stop();

      const count = async (from: Date, to: Date) => {
        const rows = (await database.db.execute(
          sql`select count(*)::int as n from probe_results where started_at >= ${from.toISOString()}::timestamptz and started_at < ${to.toISOString()}::timestamptz`,
        )) as unknown;
        const list = (Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows) as { n: number }[];
        return list[0]?.n ?? 0;
      };
      const measure = async (replicaCount: number) => {
        const cps = await Promise.all(
          Array.from({ length: replicaCount }, (_, k) => startChild({ ...env, LINEWATCH_REPLICA_ID: `bench-${replicaCount}-${k}` })),
        );
        try {
          await new Promise((r) => setTimeout(r, warmSec * 1000));
          const cpu0 = cps.map((c) => cpuMs(c.pid));
          const lab0 = process.cpuUsage();
          const pg0 = postgresCpuMs();
          const m0 = machineJiffies();
          const from = new Date();
          await new Promise((r) => setTimeout(r, windowSec * 1000));
          const to = new Date();
          const cpu = cps.map((c, k) => cpuMs(c.pid) - cpu0[k]!);
          const labCpu = process.cpuUsage(lab0);
          const pg1 = postgresCpuMs();
          const pgCpu = [...pg1].reduce((a, [pid, ms]) => a + (pg0.has(pid) ? ms - pg0.get(pid)! : 0), 0);
          const m1 = machineJiffies();
          await new Promise((r) => setTimeout(r, 1000)); // results of probes started in the window land
          const n = await count(from, to);
          const share = (ms: number) => round(ms / (windowSec * 1000), 2);
          return {
            replicas: replicaCount,
            probes: n,
            probesPerSec: round(n / windowSec, 1),
            cpuMsPerProbe: round(cpu.reduce((a, b) => a + b, 0) / Math.max(n, 1), 2),
            cpuShare: cpu.map(share),
            labCpuShare: share((labCpu.user + labCpu.system) / 1000),
            postgresCpuShare: share(pgCpu),
            machineBusy: round((m1.busy - m0.busy) / Math.max(1, m1.total - m0.total), 2),
          };
        } finally {
          await Promise.all(cps.map((c) => c.stop()));
        }
      };
      const line = (k: number, m: Awaited<ReturnType<typeof measure>>) =>
        out(
          `    round ${k + 1}, ${m.replicas} replica${m.replicas > 1 ? "s" : " "}: ${String(m.probesPerSec).padStart(6)} probes/s, ${m.cpuMsPerProbe} ms CPU per probe; CPU share: control plane ${m.cpuShare.join(" + ")}, lab ${m.labCpuShare}, PostgreSQL ${m.postgresCpuShare}; machine ${Math.round(m.machineBusy * 100)}% busy`,
        );
      // Rounds alternate one and two replicas, so a change in the machine's load hits both alike.
      const ones: Awaited<ReturnType<typeof measure>>[] = [];
      const twos: Awaited<ReturnType<typeof measure>>[] = [];
      for (let k = 0; k < rounds; k++) {
        ones.push(await measure(1));
        line(k, ones.at(-1)!);
        twos.push(await measure(2));
        line(k, twos.at(-1)!);
      }
      const mean = (xs: { probesPerSec: number }[]) => round(xs.reduce((a, x) => a + x.probesPerSec, 0) / xs.length, 1);
      const dupRows = (await database.db.execute(
        sql`select count(*)::int as n from (select line_id, sample_id, slot from probe_results where slot is not null group by 1, 2, 3 having count(*) > 1) d`,
      )) as unknown;
      const duplicates = ((Array.isArray(dupRows) ? dupRows : (dupRows as { rows: unknown[] }).rows) as { n: number }[])[0]?.n ?? 0;
      const r = {
        ...sc,
        windowSec,
        one: { probesPerSec: mean(ones), rounds: ones },
        two: { probesPerSec: mean(twos), rounds: twos },
        ratio: round(mean(twos) / Math.max(mean(ones), 0.1), 2),
        duplicateSlots: duplicates,
      };
      all.push(r);
      out(
        `    mean: 1 replica ${r.one.probesPerSec}, 2 replicas ${r.two.probesPerSec} probes/s; two ÷ one: ${r.ratio}×; (line, sample, slot) probed twice: ${duplicates}`,
      );
    } finally {
      await database.close();
      await lab.close();
    }
  }
  results.replicas = all;
}

// ---- main ---------------------------------------------------------------------------------------
const started = performance.now();
try {
  out(
    `control-plane-scale on ${results.db === "postgres" ? "PostgreSQL" : "PGlite"}, ${cpus().length} CPUs, load ${(results.machine as { loadavg: number[] }).loadavg.join(" ")}`,
  );
  if (parts.has("tables") || parts.has("longpoll")) await tablesAndLongPolls();
  if (parts.has("publish")) await publishAtScale();
  if (parts.has("replicas")) await replicas();
} finally {
  for (const c of cleanups.reverse()) await c().catch((e: unknown) => out(`cleanup failed: ${String(e)}`));
}
results.seconds = round((performance.now() - started) / 1000, 0);
out(`\ndone in ${results.seconds} s`);
if (args.json) writeFileSync(args.json, `${JSON.stringify(results, null, 2)}\n`);
process.exit(0);
