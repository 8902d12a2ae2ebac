// Memory of a control plane: RSS and high-water mark (VmRSS, VmHWM from /proc/<pid>/status) of the
// real control plane (apps/control-plane/src/main.ts, in a child process) probing 4 and 100 lab lines,
// on PGlite and on PostgreSQL, at the first start (a new database: PGlite runs initdb) and after a
// restart on the same database. Figures at each checkpoint (default 1 and 6 minutes after the
// control plane answers). 127.0.0.1 only; bounded by the checkpoints.
//
//   npx tsx bench/memory/run.ts [--at 60,360] [--lines 4,100] [--db pglite,postgres]
//       [--starts first,restart] [--trees after=.,before=/tmp/lw-before,tsx=.:tsx] [--concurrency 1] [--json out.json]
//
// --trees runs the same matrix on other checkouts in the same run (a baseline: `git worktree add
// /tmp/lw-before <commit> && (cd /tmp/lw-before && npm ci)`); each tree's main.ts runs with its own
// node_modules. --concurrency N runs N control planes at once (their memory is their own; the CPU is
// shared). PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), in
// databases the run creates and drops.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startLab } from "@linewatch/lab";
import postgres from "postgres";
import { benchArgs } from "../args";
import { controlPlaneUrl, stopControlPlane } from "../control-plane-process";

const args = benchArgs(import.meta.url, {
  at: { type: "string", default: "60,360" },
  lines: { type: "string", default: "4,100" },
  db: { type: "string", default: "pglite,postgres" },
  starts: { type: "string", default: "first,restart" },
  trees: { type: "string", default: "after=." },
  interval: { type: "string", default: "15" },
  concurrency: { type: "string", default: "1" },
  json: { type: "string" },
});
const list = (s: string | undefined) => (s ?? "").split(",").filter(Boolean);
const checkpoints = list(args.at)
  .map(Number)
  .sort((a, b) => a - b);
if (checkpoints.length === 0 || checkpoints.some((c) => !Number.isFinite(c) || c <= 0 || c > 3600))
  throw new Error("--at: seconds, 1–3600, comma-separated");
const lineCounts = list(args.lines).map(Number);
if (lineCounts.some((n) => !Number.isInteger(n) || n < 1 || n > 1000)) throw new Error("--lines: 1–1000, comma-separated");
const dbs = list(args.db) as ("pglite" | "postgres")[];
if (dbs.some((d) => d !== "pglite" && d !== "postgres")) throw new Error("--db: pglite and/or postgres");
const starts = list(args.starts);
if (starts.some((s) => s !== "first" && s !== "restart")) throw new Error("--starts: first and/or restart");
const trees = list(args.trees).map((t) => {
  const [label, spec] = t.split("=");
  if (!label || !spec) throw new Error(`--trees: label=path[:tsx], not ${t}`);
  const [path = spec, how] = spec.split(":");
  const root = resolve(path);
  // As `npm start` runs it: the bundle when the tree builds one (apps/control-plane/build.mjs), else tsx.
  const bundled = how !== "tsx" && existsSync(join(root, "apps/control-plane/build.mjs"));
  if (bundled) execFileSync(process.execPath, ["apps/control-plane/build.mjs"], { cwd: root, stdio: "inherit" });
  return { label, root, args: bundled ? ["apps/control-plane/dist/main.mjs"] : ["--import", "tsx", "apps/control-plane/src/main.ts"] };
});
const intervalSec = Number(args.interval);
const concurrency = Math.max(1, Number(args.concurrency));
const pgBase = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const ROUTE = "bench-memory";
const out = (s: string) => process.stdout.write(`${s}\n`);

// ---- /proc ---------------------------------------------------------------------------------------
function memOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

/** CPU seconds (user + system) the process has used: /proc/<pid>/stat fields 14 and 15, in clock ticks (100 a second on Linux). */
function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// ---- databases -----------------------------------------------------------------------------------
interface BenchDb {
  env: Record<string, string>;
  drop(): Promise<void>;
}
async function newDatabase(kind: "pglite" | "postgres"): Promise<BenchDb> {
  if (kind === "pglite") {
    const dir = mkdtempSync(join(tmpdir(), "lw-bench-memory-"));
    return { env: { LINEWATCH_DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `lw_bench_mem_${randomBytes(5).toString("hex")}`;
  const admin = postgres(pgBase, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(pgBase);
  url.pathname = `/${name}`;
  // The data dir still holds nothing on PostgreSQL, but keep the process from writing into the tree.
  const dir = mkdtempSync(join(tmpdir(), "lw-bench-memory-"));
  return {
    env: { DATABASE_URL: url.toString(), LINEWATCH_DATA_DIR: dir },
    drop: async () => {
      const a = postgres(pgBase, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- one control plane ---------------------------------------------------------------------------
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

async function startControlPlane(
  tree: { root: string; args: string[] },
  env: Record<string, string>,
): Promise<{ url: string; proc: ChildProcess; pid: number }> {
  const proc = spawn(process.execPath, tree.args, {
    cwd: tree.root,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? tmpdir(),
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "warn",
      LINEWATCH_SECRET_KEY: "11".repeat(32),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(proc);
  const url = await controlPlaneUrl(proc, 300_000);
  if (proc.pid === undefined) throw new Error("no pid");
  return { url, proc, pid: proc.pid };
}

async function api(url: string, method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? null : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

/** Probes done, and where the memory is as the process sees it (V8 heap; external: ArrayBuffers, PGlite's WebAssembly memory). */
async function scrape(url: string): Promise<{ probes: number; heap: number; external: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let probes = 0;
  for (const m of text.matchAll(/^linewatch_probes_total\{[^}]*\} (\d+(?:\.\d+)?)$/gm)) probes += Number(m[1]);
  const mb = (name: string) => Math.round(Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN) / 1e6);
  return { probes, heap: mb("linewatch_nodejs_heap_size_used_bytes"), external: mb("linewatch_nodejs_external_memory_bytes") };
}

interface Row {
  tree: string;
  db: string;
  lines: number;
  start: string;
  /** Seconds from spawn until the control plane answered. */
  readySec: number;
  /** VmHWM when it answered (the first start's initdb and migrations are behind it). */
  hwmReady: number;
  /** cpu: CPU seconds since the control plane answered. */
  at: { sec: number; rss: number; hwm: number; probes: number; heap: number; external: number; cpu: number }[];
}

async function measure(
  tree: (typeof trees)[number],
  db: BenchDb,
  lines: string[],
  labUrl: (name: string) => string,
  start: string,
  kind: string,
): Promise<Row> {
  const spawned = performance.now();
  const cp = await startControlPlane(tree, db.env);
  const readySec = (performance.now() - spawned) / 1000;
  const row: Row = { tree: tree.label, db: kind, lines: lines.length, start, readySec, hwmReady: memOf(cp.pid).hwm, at: [] };
  try {
    if (start === "first") {
      await api(cp.url, "POST", "/v1/routes", { name: ROUTE });
      for (const name of lines)
        await api(cp.url, "POST", "/v1/lines", {
          name,
          tier: "free",
          protocol: "openai-chat",
          baseUrl: labUrl(name),
          model: "lab-model",
          routes: [{ route: ROUTE, weight: 100 }],
          probeIntervalSec: intervalSec,
        });
    }
    const t0 = performance.now();
    const cpu0 = cpuOf(cp.pid);
    for (const sec of checkpoints) {
      const wait = t0 + sec * 1000 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      row.at.push({ sec, ...memOf(cp.pid), ...(await scrape(cp.url)), cpu: cpuOf(cp.pid) - cpu0 });
    }
  } finally {
    await stopControlPlane(cp.proc);
    children.delete(cp.proc);
  }
  return row;
}

/** One tree × database × line count: a first start on a new database, then a restart on it. */
async function runConfig(tree: (typeof trees)[number], kind: "pglite" | "postgres", n: number): Promise<Row[]> {
  const names = Array.from({ length: n }, (_, i) => `mem-${i}`);
  const lab = await startLab({ lines: names.map((name) => ({ name, baseLatencyMs: 150, latencyJitterMs: 100 })) });
  const db = await newDatabase(kind);
  const rows: Row[] = [];
  try {
    // A restart needs the registry of a first start, so the first start always runs.
    const first = await measure(tree, db, names, (name) => lab.baseUrl(name), "first", kind);
    if (starts.includes("first")) rows.push(first);
    if (starts.includes("restart")) rows.push(await measure(tree, db, names, (name) => lab.baseUrl(name), "restart", kind));
  } finally {
    await db.drop();
    await lab.close();
  }
  return rows;
}

// ---- the matrix ----------------------------------------------------------------------------------
const configs = trees.flatMap((tree) => dbs.flatMap((kind) => lineCounts.map((n) => ({ tree, kind, n }))));
// Interleave trees so before and after see the same load.
configs.sort((a, b) => a.kind.localeCompare(b.kind) || a.n - b.n);
const load0 = loadavg();
out(
  `memory: ${configs.length} configurations × starts [${starts}], checkpoints ${checkpoints.map((c) => `${c} s`).join(", ")}, concurrency ${concurrency}`,
);
out(`machine: ${cpus().length} × ${cpus()[0]?.model}, load ${load0.map((l) => l.toFixed(1)).join(" ")}, node ${process.version}`);
const rows: Row[] = [];
const queue = [...configs];
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const got = await runConfig(c.tree, c.kind, c.n);
      rows.push(...got);
      for (const r of got)
        out(
          `  done: ${r.tree} ${r.db} ${r.lines} lines ${r.start}: ${r.at.map((a) => `${a.sec}s rss ${a.rss.toFixed(0)} hwm ${a.hwm.toFixed(0)} heap ${a.heap} ext ${a.external}`).join("; ")}`,
        );
    }
  }),
);
rows.sort((a, b) => a.db.localeCompare(b.db) || a.lines - b.lines || b.start.localeCompare(a.start) || a.tree.localeCompare(b.tree));

const mb = (x: number) => x.toFixed(0);
const header = [
  "db",
  "lines",
  "start",
  "tree",
  "ready s",
  "HWM at ready",
  ...checkpoints.flatMap((c) => [`RSS ${c} s`, `HWM ${c} s`]),
  "probes",
  "CPU % of a core",
];
out("");
out(
  `MB; load at the end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
out(`| ${header.join(" | ")} |`);
out(`| ${header.map(() => "---").join(" | ")} |`);
for (const r of rows)
  out(
    `| ${[r.db, r.lines, r.start, r.tree, r.readySec.toFixed(1), mb(r.hwmReady), ...r.at.flatMap((a) => [mb(a.rss), mb(a.hwm)]), r.at.at(-1)?.probes ?? 0, (((r.at.at(-1)?.cpu ?? 0) / (r.at.at(-1)?.sec ?? 1)) * 100).toFixed(1)].join(" | ")} |`,
  );
if (args.json) writeFileSync(args.json, JSON.stringify({ loadavg: [load0, loadavg()], checkpoints, rows }, null, 2));
process.exit(0);
