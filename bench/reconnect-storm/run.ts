// Reconnect storm: a replica restarts and every router reconnects at once. 10,000 routers (from two
// load processes on 127.0.0.1, one TCP connection each) open their table long-polls within 1 s
// against one control plane on PostgreSQL, each with the ETag it held before the restart (a version
// was published meanwhile, so each is answered 200 and then polls again and is held). Measured: the
// time until every router has the current table (p50/p99/last, from each one's own start), the
// control plane's CPU for the storm, an admin GET sent every 20 ms during it (p50/p99/max), then the
// steady fan-out on the same 10,000 held polls: memory held over idle, one publish waking them all
// (p99/last), and the admin GET during that wake-up. Bounded: every wait has a deadline.
//
//   npx tsx bench/reconnect-storm/run.ts [options]
//
//    --routers N          routers in the storm (default 10000)
//    --spread-ms N        the window they connect in (default 1000)
//    --loaders N          load processes (default 2)
//    --rounds N           storms per target (default 3); targets alternate round by round
//    --targets LIST       name=checkout,… : the control plane of each checkout (default after=. , this tree);
//                         e.g. --targets main=/tmp/main-copy,after=. (a copy at main with node_modules linked)
//    --json FILE          also write the figures as JSON
//    --cpu-prof DIR       write a CPU profile of each control plane into DIR (node --cpu-prof)
//    --cp-node-args ARGS  more node options for the control planes (space-separated), e.g. "--max-semi-space-size=32"
//
// PostgreSQL at DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), in a scratch
// database per target that the run creates and drops. The control plane is the checkout's real
// main.ts (bench/control-plane-scale/serve.ts, bundled as `npm start` runs it) in a child process.

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { benchArgs } from "../args";
import { nodeArgsFor } from "../bundle";
import { controlPlaneMemory, controlPlaneRequest, controlPlaneUrl, stopControlPlane } from "../control-plane-process";
import { scratchDatabase } from "../scratch-database";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");

const args = benchArgs(import.meta.url, {
  routers: { type: "string", default: "10000" },
  "spread-ms": { type: "string", default: "1000" },
  loaders: { type: "string", default: "2" },
  rounds: { type: "string", default: "3" },
  targets: { type: "string", default: "after=." },
  json: { type: "string" },
  "cpu-prof": { type: "string" },
  "cp-node-args": { type: "string", default: "" },
});
const ROUTERS = Math.max(1, Math.min(15_000, Number(args.routers)));
const SPREAD_MS = Number(args["spread-ms"]);
const LOADERS = Math.max(1, Math.min(4, Number(args.loaders)));
const ROUNDS = Math.max(1, Number(args.rounds));
const WAIT_SEC = 60;
const targets = (args.targets ?? "").split(",").map((t) => {
  const [name, dir] = t.split("=") as [string, string | undefined];
  return { name, dir: resolve(dir ?? ".") };
});
const pgBase = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const SECRET_KEY = randomBytes(32).toString("hex");
const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString("hex")}`;
const out = (s: string) => process.stdout.write(`${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const epoch = () => performance.timeOrigin + performance.now();
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const round = (n: number, d = 0) => Math.round(n * 10 ** d) / 10 ** d;
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};

const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

interface ControlPlane {
  url: string;
  pid: number;
  mem(): Promise<{ rss: number; heapUsed: number; sockets: number }>;
  stop(): Promise<void>;
}

async function startControlPlane(dir: string, databaseUrl: string): Promise<ControlPlane> {
  const profile = args["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", resolve(args["cpu-prof"])] : [];
  const extra = (args["cp-node-args"] ?? "").split(" ").filter((a) => a !== "");
  const proc = spawn(
    process.execPath,
    [...profile, ...extra, "--expose-gc", ...nodeArgsFor(join(dir, "bench/control-plane-scale/serve.ts"))],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? tmpdir(),
        HOST: "127.0.0.1",
        PORT: "0",
        LOG_LEVEL: "warn",
        LINEWATCH_SECRET_KEY: SECRET_KEY,
        LINEWATCH_ADMIN_TOKEN: ADMIN_TOKEN,
        LINEWATCH_SCHEDULER: "false",
        LINEWATCH_SHIPPED_SAMPLES: "false",
        DATABASE_URL: databaseUrl,
      },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    },
  );
  children.add(proc);
  const url = await controlPlaneUrl(proc, 120_000);
  const mem = () => controlPlaneMemory(proc);
  return {
    url,
    pid: proc.pid!,
    mem,
    stop: async () => {
      await stopControlPlane(proc);
      children.delete(proc);
    },
  };
}

function api(url: string, path: string, init: { method?: string; json?: unknown; token?: string } = {}): Promise<Response> {
  return controlPlaneRequest(url, path, { ...init, token: init.token ?? ADMIN_TOKEN });
}

/** Route `chat` with 10 lines (keys set) and a router token. */
async function seed(url: string): Promise<{ lineId: string; router: string }> {
  await api(url, "/v1/routes", { method: "POST", json: { name: "chat" } });
  let lineId = "";
  for (let i = 0; i < 10; i++) {
    const res = await api(url, "/v1/lines", {
      method: "POST",
      json: {
        name: `line-${i}`,
        tier: "paid",
        protocol: "openai-chat",
        baseUrl: `http://127.0.0.1:9/v${i}`,
        model: "m",
        apiKey: `sk-bench-${i}-${randomBytes(8).toString("hex")}`,
        routes: [{ route: "chat", weight: 10 + i }],
      },
    });
    if (i === 0) lineId = ((await res.json()) as { id: string }).id;
  }
  const token = await api(url, "/v1/tokens", { method: "POST", json: { name: "bench-router", role: "router" } });
  return { lineId, router: ((await token.json()) as { token: string }).token };
}

// ---- load processes ------------------------------------------------------------------------------
interface RouterLog {
  due: number;
  current: number | null;
  status: number | null;
  woken: number | null;
  wokenStatus: number | null;
  error: string | null;
}
interface Loader {
  send(message: object): void;
  next(type: string): Promise<Record<string, unknown>>;
  proc: ChildProcess;
}

async function startLoader(): Promise<Loader> {
  const proc = spawn(process.execPath, nodeArgsFor(join(here, "loader.ts")), { cwd: root, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  children.add(proc);
  const next = (type: string) =>
    new Promise<Record<string, unknown>>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`loader: no ${type} in 30 s`)), 30_000);
      const on = (m: Record<string, unknown>) => {
        if (m.type !== type) return;
        clearTimeout(timer);
        proc.off("message", on);
        res(m);
      };
      proc.on("message", on);
    });
  await next("ready");
  return { proc, next, send: (m) => proc.send(m) };
}

/** How many routers are current (or failed) and how many were woken (or failed), over every loader. */
async function counts(loaders: Loader[]): Promise<{ current: number; woken: number }> {
  const all = await Promise.all(
    loaders.map(async (l) => {
      const answer = l.next("count");
      l.send({ type: "count" });
      return (await answer) as { current: number; woken: number };
    }),
  );
  return { current: all.reduce((a, c) => a + c.current, 0), woken: all.reduce((a, c) => a + c.woken, 0) };
}

async function reports(loaders: Loader[]): Promise<RouterLog[]> {
  const all = await Promise.all(
    loaders.map(async (l) => {
      const answer = l.next("report");
      l.send({ type: "report" });
      return (await answer).routers as RouterLog[];
    }),
  );
  return all.flat();
}

/** An admin GET every 20 ms on one keep-alive connection, until stopped: [sent at (epoch ms), latency ms]. */
function adminProbe(url: string): { stop(): Promise<[number, number][]> } {
  const pool = new Pool(url, { connections: 1 });
  const samples: [number, number][] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = epoch();
      const res = await pool.request({ path: "/v1/routes", method: "GET", headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`admin GET → ${res.statusCode}`);
      samples.push([t, epoch() - t]);
      await sleep(Math.max(0, 20 - (epoch() - t)));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      await pool.close();
      return samples;
    },
  };
}

const within = (samples: [number, number][], from: number, to: number) =>
  samples
    .filter(([t]) => t >= from && t <= to)
    .map(([, ms]) => ms)
    .sort((a, b) => a - b);

// ---- one storm -------------------------------------------------------------------------------------
async function storm(
  target: { name: string; dir: string },
  db: { url: string; seeded: { lineId: string; router: string } | null },
  n: number,
) {
  // The version the routers held: published, then the replica restarts.
  let cp = await startControlPlane(target.dir, db.url);
  db.seeded ??= await seed(cp.url);
  const { lineId, router } = db.seeded;
  const held = (await api(cp.url, "/v1/tables/chat", { token: router })).headers.get("etag")!;
  await api(cp.url, `/v1/lines/${lineId}`, { method: "PATCH", json: { routes: [{ route: "chat", weight: 100 + n }] } });
  await cp.stop();
  cp = await startControlPlane(target.dir, db.url);
  const { hostname, port } = new URL(cp.url);
  const loaders = await Promise.all(Array.from({ length: LOADERS }, () => startLoader()));
  try {
    const idle = await cp.mem();
    const admin = adminProbe(cp.url);
    await sleep(300);
    const startAt = epoch() + 500;
    const cpu0 = cpuMs(cp.pid);
    let offset = 0;
    await Promise.all(
      loaders.map(async (l, i) => {
        const count = Math.floor(ROUTERS / LOADERS) + (i < ROUTERS % LOADERS ? 1 : 0);
        const armed = l.next("armed");
        // Each loader's routers interleave with the others' over the same spread.
        l.send({
          type: "storm",
          host: hostname,
          port: Number(port),
          path: "/v1/tables/chat",
          token: router,
          etag: held,
          count,
          startAt: startAt + (offset++ * SPREAD_MS) / ROUTERS,
          spreadMs: SPREAD_MS,
          waitSec: WAIT_SEC,
        });
        await armed;
      }),
    );
    // Until every router is current (or 30 s), then a second for their next polls to be held. The
    // server's memory is read only after (its probe runs a full GC).
    const deadline = startAt + SPREAD_MS + 30_000;
    while ((await counts(loaders)).current < ROUTERS && epoch() < deadline) await sleep(200);
    await sleep(1000);
    const stormCpu = cpuMs(cp.pid) - cpu0;
    const logs = await reports(loaders);
    const stormEnd = Math.max(...logs.map((l) => l.current ?? 0));
    const toCurrent = logs
      .filter((l) => l.current !== null)
      .map((l) => (l.current as number) - l.due)
      .sort((a, b) => a - b);
    const statuses: Record<string, number> = {};
    for (const l of logs) statuses[String(l.status ?? l.error ?? "none")] = (statuses[String(l.status ?? l.error ?? "none")] ?? 0) + 1;

    // Steady fan-out: one publish wakes every held poll.
    const holding = await cp.mem();
    await sleep(500);
    const wakeCpu0 = cpuMs(cp.pid);
    const t0 = epoch();
    await api(cp.url, `/v1/lines/${lineId}`, { method: "PATCH", json: { routes: [{ route: "chat", weight: 200 + n }] } });
    const wakeDeadline = t0 + 20_000;
    while ((await counts(loaders)).woken < ROUTERS && epoch() < wakeDeadline) await sleep(100);
    const wakeCpu = cpuMs(cp.pid) - wakeCpu0;
    const woken = await reports(loaders);
    const wakeEnd = Math.max(...woken.map((l) => l.woken ?? 0));
    const wake = woken
      .filter((l) => l.woken !== null)
      .map((l) => (l.woken as number) - t0)
      .sort((a, b) => a - b);
    const adminSamples = await admin.stop();
    const adminStorm = within(adminSamples, startAt, stormEnd);
    const adminWake = within(adminSamples, t0, wakeEnd);
    const mb = (b: number) => round(b / 1048576, 1);
    return {
      target: target.name,
      routers: ROUTERS,
      current: toCurrent.length,
      statuses,
      errors: logs.filter((l) => l.error).length,
      toCurrentMs: { p50: round(pct(toCurrent, 50)), p99: round(pct(toCurrent, 99)), last: round(toCurrent.at(-1) ?? Number.NaN) },
      stormMs: round(stormEnd - startAt),
      stormServerCpuMs: round(stormCpu),
      adminDuringStorm: {
        n: adminStorm.length,
        p50: round(pct(adminStorm, 50), 1),
        p99: round(pct(adminStorm, 99), 1),
        max: round(adminStorm.at(-1) ?? Number.NaN, 1),
      },
      held: holding.sockets - idle.sockets,
      memory: {
        idleRssMB: mb(idle.rss),
        holdingRssMB: mb(holding.rss),
        plusMB: mb(holding.rss - idle.rss),
        heapPlusMB: mb(holding.heapUsed - idle.heapUsed),
      },
      woke: wake.length,
      wokenStatuses: [...new Set(woken.map((l) => l.wokenStatus))].join(","),
      wakeMs: { p50: round(pct(wake, 50)), p99: round(pct(wake, 99)), last: round(wake.at(-1) ?? Number.NaN) },
      wakeServerCpuMs: round(wakeCpu),
      adminDuringWake: {
        n: adminWake.length,
        p50: round(pct(adminWake, 50), 1),
        p99: round(pct(adminWake, 99), 1),
        max: round(adminWake.at(-1) ?? Number.NaN, 1),
      },
    };
  } finally {
    await Promise.all(
      loaders.map(async (l) => {
        const closed = l.next("closed").catch(() => {});
        l.send({ type: "close" });
        await closed;
        children.delete(l.proc);
      }),
    );
    await cp.stop();
  }
}

// ---- main ------------------------------------------------------------------------------------------
const machine = { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg().map((l) => round(l, 1)), node: process.version };
out(`reconnect storm: ${ROUTERS} routers within ${SPREAD_MS} ms from ${LOADERS} load processes; ${ROUNDS} round(s) per target`);
out(`machine: ${JSON.stringify(machine)}`);
const dbs = await Promise.all(
  targets.map(async () => {
    const db = await scratchDatabase({ pgBase, prefix: "lw_storm" });
    if (db.kind !== "postgres") throw new Error("PostgreSQL only");
    return { url: db.url, drop: db.drop, seeded: null as { lineId: string; router: string } | null };
  }),
);
const rows: Awaited<ReturnType<typeof storm>>[] = [];
try {
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate the order round by round, so neither target always runs on a warmer machine.
    const order = r % 2 === 0 ? targets.map((_, i) => i) : targets.map((_, i) => targets.length - 1 - i);
    for (const i of order) {
      const target = targets[i]!;
      const row = await storm(target, dbs[i]!, r);
      rows.push(row);
      out(
        `${target.name} round ${r + 1} (load ${loadavg()[0]?.toFixed(1)}): current ${row.current}/${ROUTERS} ${JSON.stringify(row.statuses)} · to current p50 ${row.toCurrentMs.p50} p99 ${row.toCurrentMs.p99} last ${row.toCurrentMs.last} ms · storm ${row.stormMs} ms, server CPU ${row.stormServerCpuMs} ms · admin GET during it p50 ${row.adminDuringStorm.p50} p99 ${row.adminDuringStorm.p99} max ${row.adminDuringStorm.max} ms (n ${row.adminDuringStorm.n})`,
      );
      out(
        `    held ${row.held}: RSS ${row.memory.idleRssMB} → ${row.memory.holdingRssMB} MB (+${row.memory.plusMB}, heap +${row.memory.heapPlusMB}) · one publish woke ${row.woke} (${row.wokenStatuses}) p50 ${row.wakeMs.p50} p99 ${row.wakeMs.p99} last ${row.wakeMs.last} ms, server CPU ${row.wakeServerCpuMs} ms · admin GET during it p50 ${row.adminDuringWake.p50} p99 ${row.adminDuringWake.p99} max ${row.adminDuringWake.max} ms (n ${row.adminDuringWake.n})`,
      );
    }
  }
} finally {
  for (const db of dbs) await db.drop().catch(() => {});
}
if (args.json) writeFileSync(args.json, JSON.stringify({ machine, rows }, null, 2));
