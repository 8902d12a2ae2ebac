// Probe throughput: sustained probes per second and CPU per probe of the control plane probing lab
// lines, next to the floor (the same probes with no scheduler and no database). Every process
// (lab, control plane, floor) runs on its own, so each CPU figure is that process's own.
// Bounded: 127.0.0.1 only, every run stops after its window.
//
//   npx tsx bench/probe-throughput/run.ts                 # 100 and 1000 lines, PostgreSQL and PGlite, ~15 min
//   npx tsx bench/probe-throughput/run.ts --quick         # 1000 lines on PostgreSQL, short windows
//   npx tsx bench/probe-throughput/run.ts --lines 1000 --db postgres --profile
//
// PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names a server;
// the run creates a database of its own there and drops it at the end.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { benchArgs } from "../args";
import type { EngineOptions, EngineResult } from "./engine";
import type { FloorOptions, FloorResult } from "./floor";
import { type CpuProfile, formatSummary, summarizeProfile } from "./profile-summary";
import { procCpuMs } from "./shared";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");

const args = benchArgs(import.meta.url, {
  lines: { type: "string", default: "100,1000" },
  db: { type: "string", default: "postgres,pglite" },
  interval: { type: "string", default: "45" },
  seconds: { type: "string", default: "60" },
  warmup: { type: "string", default: "50" },
  latency: { type: "string", default: "50" },
  jitter: { type: "string", default: "100" },
  "max-in-flight": { type: "string", default: "64" },
  "lines-per-route": { type: "string", default: "50" },
  "no-floor": { type: "boolean", default: false },
  "no-idle": { type: "boolean", default: false },
  profile: { type: "boolean", default: false },
  quick: { type: "boolean", default: false },
  json: { type: "string" },
});
const quick = args.quick ?? false;
const lineCounts = (quick ? "1000" : args.lines!).split(",").map((s) => Math.max(1, Math.min(5000, Number(s))));
const dbs = (quick ? "postgres" : args.db!).split(",").filter((d): d is "postgres" | "pglite" => d === "postgres" || d === "pglite");
const intervalSec = Math.max(1, Number(args.interval));
const seconds = Math.max(5, Math.min(600, Number(quick ? 20 : args.seconds)));
const warmupSec = Math.max(0, Math.min(600, Number(quick ? 15 : args.warmup)));
const maxInFlight = Number(args["max-in-flight"]);
const linesPerRoute = Number(args["lines-per-route"]);
const latencyMs = Number(args.latency);
const jitterMs = Number(args.jitter);
const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

// ---- processes ------------------------------------------------------------------------
const children = new Set<ChildProcess>();
const cleanups: (() => Promise<void>)[] = [];
async function cleanup() {
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  for (const f of cleanups.splice(0).reverse()) await f().catch(() => {});
}
process.on("SIGINT", () => void cleanup().then(() => process.exit(130)));

interface Child {
  child: ChildProcess;
  /** Resolves with the first `PREFIX rest` line's rest. */
  line(prefix: string): Promise<string>;
  exited: Promise<number | null>;
}

function start(file: string, opts: unknown, timeoutMs: number): Child {
  const child = spawn(process.execPath, ["--import", "tsx", join(here, file), JSON.stringify(opts)], {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.add(child);
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  let out = "";
  let err = "";
  const waiters: { prefix: string; resolve: (s: string) => void; reject: (e: Error) => void }[] = [];
  const seen: string[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const hit = seen.find((l) => l.startsWith(`${w.prefix} `));
      if (hit) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(hit.slice(w.prefix.length + 1));
      }
    }
  };
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
    const parts = out.split("\n");
    out = parts.pop() ?? "";
    seen.push(...parts);
    check();
  });
  child.stderr!.on("data", (d: Buffer) => {
    err = (err + d.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((r) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      children.delete(child);
      for (const w of waiters.splice(0)) w.reject(new Error(`${file} exited (${code}) without "${w.prefix}": ${err}`));
      r(code);
    }),
  );
  return {
    child,
    exited,
    line: (prefix) =>
      new Promise((resolve, reject) => {
        waiters.push({ prefix, resolve, reject });
        check();
        if (child.exitCode !== null) reject(new Error(`${file} exited (${child.exitCode}): ${err}`));
      }),
  };
}

/** CPU of a set of processes over a span, also counting those that come and go meanwhile (last reading). */
class CpuWatch {
  private last = new Map<number, number>();
  private base = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  constructor(private readonly pids: () => Promise<number[]>) {}
  private async poll() {
    for (const pid of await this.pids()) {
      const ms = procCpuMs(pid);
      if (ms !== null) this.last.set(pid, ms);
    }
  }
  async begin() {
    await this.poll();
    this.base = new Map(this.last);
    this.timer = setInterval(() => void this.poll().catch(() => {}), 500);
  }
  async end(): Promise<number> {
    if (this.timer) clearInterval(this.timer);
    await this.poll();
    let total = 0;
    for (const [pid, ms] of this.last) total += ms - (this.base.get(pid) ?? 0);
    return total;
  }
}

// ---- runs -----------------------------------------------------------------------------
interface EngineRun extends EngineResult {
  pgBackendCpuMs: number | null;
  labCpuMs: number;
  /** PostgreSQL transactions (each statement outside a transaction is one) in the window. */
  pgTransactions: number | null;
  profileSummary?: string;
}

async function runEngine(
  lab: { url: string; pid: number },
  db: "postgres" | "pglite",
  lines: number,
  opts_: { profile?: boolean; idle?: boolean } = {},
): Promise<EngineRun> {
  const profile = opts_.profile ?? false;
  const name = `lw_bench_${randomBytes(5).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  let url: string | undefined;
  let dataDir: string | undefined;
  if (db === "postgres") {
    await admin.unsafe(`create database ${name}`);
    const u = new URL(adminUrl);
    u.pathname = `/${name}`;
    url = u.toString();
  } else {
    // On disk, as `npm run serve` keeps it (in-memory PGlite would flatter it).
    dataDir = mkdtempSync(join(tmpdir(), "lw-bench-"));
  }
  const drop = async () => {
    if (db === "postgres") await admin.unsafe(`drop database if exists ${name} with (force)`);
    else rmSync(dataDir!, { recursive: true, force: true });
    await admin.end();
  };
  cleanups.push(drop);
  const profilePath = profile ? join(tmpdir(), `probe-throughput-${db}-${lines}-${Date.now()}.cpuprofile`) : undefined;
  try {
    // Idle: the same lines probed once a day, so (almost) nothing is due in the window: the fixed cost.
    const opts: EngineOptions = {
      db,
      url,
      dataDir,
      labUrl: lab.url,
      lines,
      intervalSec: opts_.idle ? 86_400 : intervalSec,
      warmupSec: opts_.idle ? Math.min(warmupSec, 20) : warmupSec,
      seconds,
      maxInFlight,
      linesPerRoute,
      ...(profilePath ? { profile: profilePath } : {}),
    };
    const proc = start("engine.ts", opts, (warmupSec + seconds + 300) * 1000);
    const pg =
      db === "postgres"
        ? new CpuWatch(async () => (await admin`select pid from pg_stat_activity where datname = ${name}`).map((r) => Number(r.pid)))
        : null;
    const labCpu = new CpuWatch(async () => [lab.pid]);
    // The child says when its window opens and closes: watch the database backends and the lab meanwhile.
    const xacts = async () =>
      db === "postgres"
        ? Number((await admin`select xact_commit + xact_rollback as n from pg_stat_database where datname = ${name}`)[0]?.n ?? 0)
        : 0;
    await proc.line("WINDOW");
    const [, , x0] = await Promise.all([pg?.begin(), labCpu.begin(), xacts()]);
    await proc.line("WINDOW-END");
    const pgMs = pg ? await pg.end() : null;
    // Backends report their counters at most once a second: let them.
    if (db === "postgres") await new Promise((r) => setTimeout(r, 1200));
    const x1 = db === "postgres" ? await xacts() : 0;
    const labMs = await labCpu.end();
    const result = JSON.parse(await proc.line("RESULT")) as EngineResult;
    await proc.exited;
    const run: EngineRun = { ...result, pgBackendCpuMs: pgMs, labCpuMs: labMs, pgTransactions: db === "postgres" ? x1 - x0 : null };
    if (profilePath) {
      run.profileSummary = formatSummary(summarizeProfile(JSON.parse(readFileSync(profilePath, "utf8")) as CpuProfile), result.window.sent);
      run.profileSummary += `\n  (profile: ${profilePath})`;
    }
    return run;
  } finally {
    cleanups.splice(cleanups.indexOf(drop), 1);
    await drop();
  }
}

async function runFloor(lab: { url: string }, mode: "send" | "score", lines: number): Promise<FloorResult> {
  const opts: FloorOptions = { mode, labUrl: lab.url, lines, intervalSec, warmupSec: Math.min(warmupSec, 5), seconds, maxInFlight };
  const proc = start("floor.ts", opts, (seconds + 120) * 1000);
  const result = JSON.parse(await proc.line("RESULT")) as FloorResult;
  await proc.exited;
  return result;
}

// ---- report ---------------------------------------------------------------------------
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const usPerProbe = (ms: number, probes: number) => (probes > 0 ? (ms * 1000) / probes : Number.NaN);

async function main() {
  const maxLines = Math.max(...lineCounts);
  const labProc = start("lab-server.ts", { lines: maxLines, latencyMs, jitterMs }, 3 * 3600_000);
  const lab = { url: await labProc.line("READY"), pid: labProc.child.pid! };
  cleanups.push(async () => {
    labProc.child.stdin!.end();
    await labProc.exited;
  });

  const out = (s = "") => process.stdout.write(`${s}\n`);
  out(
    `probe-throughput · ${new Date().toISOString()} · node ${process.version} · ${cpus().length}× ${cpus()[0]?.model ?? "?"} · load ${loadavg().map(f2).join(" ")}`,
  );
  out(
    `interval ${intervalSec} s · warm-up ${warmupSec} s · window ${seconds} s · lab latency ${latencyMs}+U(0,${jitterMs}) ms · max in flight ${maxInFlight} · ${linesPerRoute} lines per route`,
  );
  out();

  const engineRuns: EngineRun[] = [];
  const idleRuns: EngineRun[] = [];
  const floorRuns: FloorResult[] = [];
  for (const lines of lineCounts) {
    for (const db of dbs) {
      out(`engine · ${db} · ${lines} lines …`);
      const r = await runEngine(lab, db, lines);
      engineRuns.push(r);
      out(engineLine(r));
      if (!args["no-idle"]) {
        out(`engine idle · ${db} · ${lines} lines probed once a day …`);
        const idle = await runEngine(lab, db, lines, { idle: true });
        idleRuns.push(idle);
        out(
          `  ${idle.window.sent} probes; CPU ${idle.window.cpuMs.toFixed(0)} ms in ${f1(idle.window.wallMs / 1000)} s = ${f1((100 * idle.window.cpuMs) / idle.window.wallMs)}% of a core`,
        );
      }
    }
    if (!args["no-floor"]) {
      for (const mode of ["send", "score"] as const) {
        out(`floor · ${mode} · ${lines} lines …`);
        const f = await runFloor(lab, mode, lines);
        floorRuns.push(f);
        out(floorLine(f));
      }
    }
  }
  const profiles: EngineRun[] = [];
  if (args.profile) {
    for (const db of dbs) {
      out(`profile · ${db} · ${maxLines} lines …`);
      const r = await runEngine(lab, db, maxLines, { profile: true });
      profiles.push(r);
      out(engineLine(r));
      out(r.profileSummary ?? "");
    }
  }

  out();
  out("summary: % of one core = process CPU ÷ wall time over the window; µs/probe = process CPU ÷ probes sent");
  out("| run | lines | probes/s (target) | % of one core | CPU µs/probe | lateness mean / p99 ms | PostgreSQL's own backends |");
  out("|---|---|---|---|---|---|---|");
  const pct = (cpuMs: number, wallMs: number) => (100 * cpuMs) / wallMs;
  for (const lines of lineCounts) {
    for (const r of engineRuns.filter((e) => e.lines === lines)) {
      const w = r.window;
      out(
        `| control plane, ${r.db} | ${lines} | ${f1((w.sent * 1000) / w.wallMs)} (${f1(r.expectedPerSec)}) | ${f1(pct(w.cpuMs, w.wallMs))}% | ${usPerProbe(w.cpuMs, w.sent).toFixed(0)} | ${r.lateness.mean.toFixed(0)} / ${r.lateness.p99.toFixed(0)} | ${r.pgBackendCpuMs === null ? "in-process" : `${f1(pct(r.pgBackendCpuMs, w.wallMs))}% (${f2((r.pgTransactions ?? 0) / w.sent)} tx/probe)`} |`,
      );
    }
    for (const r of idleRuns.filter((e) => e.lines === lines)) {
      out(
        `| control plane idle, ${r.db} (nothing due) | ${lines} | ${f1((r.window.sent * 1000) / r.window.wallMs)} | ${f1(pct(r.window.cpuMs, r.window.wallMs))}% | – | – | ${r.pgBackendCpuMs === null ? "in-process" : `${f1(pct(r.pgBackendCpuMs, r.window.wallMs))}%`} |`,
      );
    }
    for (const f of floorRuns.filter((x) => x.lines === lines)) {
      out(
        `| floor: ${f.mode === "send" ? "send only" : "send + score"} | ${lines} | ${f1((f.sent * 1000) / f.wallMs)} (${f1(f.expectedPerSec)}) | ${f1(pct(f.cpuMs, f.wallMs))}% | ${usPerProbe(f.cpuMs, f.sent).toFixed(0)} | – | – |`,
      );
    }
  }
  out();
  out(
    "where a probe's CPU goes (per probe, µs): network = floor send; scoring = floor score − floor send; control plane's own = the rest of",
  );
  out(
    "the engine's CPU (claiming, storing, health, tables, timers, and the garbage of all that); idle = the same control plane with nothing due",
  );
  out("| run | lines | total | network | scoring | control plane's own | control plane's own, % of one core | idle, % of one core |");
  out("|---|---|---|---|---|---|---|---|");
  for (const r of engineRuns) {
    const send = floorRuns.find((f) => f.lines === r.lines && f.mode === "send");
    const score = floorRuns.find((f) => f.lines === r.lines && f.mode === "score");
    if (!send || !score) continue;
    const idle = idleRuns.find((i) => i.lines === r.lines && i.db === r.db);
    const rate = (r.window.sent * 1000) / r.window.wallMs;
    const total = usPerProbe(r.window.cpuMs, r.window.sent);
    const network = usPerProbe(send.cpuMs, send.sent);
    const scoring = usPerProbe(score.cpuMs, score.sent) - network;
    const own = total - network - scoring;
    const idlePct = idle ? `${f1(pct(idle.window.cpuMs, idle.window.wallMs))}%` : "–";
    out(
      `| ${r.db} | ${r.lines} | ${total.toFixed(0)} | ${network.toFixed(0)} | ${scoring.toFixed(0)} | ${own.toFixed(0)} | ${f1((own * rate) / 1e4)}% | ${idlePct} |`,
    );
  }
  out();
  for (const r of engineRuns.filter((e) => e.lines >= 1000)) {
    const p = pct(r.window.cpuMs, r.window.wallMs);
    const kept = r.window.sent >= 0.95 * r.expectedPerSec * (r.window.wallMs / 1000);
    const withPg = r.pgBackendCpuMs === null ? "" : `; with its PostgreSQL backends ${f1(p + pct(r.pgBackendCpuMs, r.window.wallMs))}%`;
    out(
      `goal (1000 lines × 4 samples at 45 s under 10% of one core), ${r.db}: ${f1(p)}%${withPg}${kept ? "" : " (and did not keep up)"} → ${p < 10 && kept ? "met" : "MISSED"}`,
    );
  }
  if (args.json) writeFileSync(args.json, JSON.stringify({ engineRuns, idleRuns, floorRuns, profiles }, null, 2));
  await cleanup();
}

function engineLine(r: EngineRun): string {
  const w = r.window;
  const per = usPerProbe(w.cpuMs, w.sent);
  return [
    `  window: ${w.sent} probes in ${f1(w.wallMs / 1000)} s = ${f1((w.sent * 1000) / w.wallMs)}/s (target ${f1(r.expectedPerSec)}; stored ${w.stored}; ${JSON.stringify(r.byTrigger)}; passed ${f1(100 * r.passedShare)}%)`,
    `          CPU ${w.cpuMs.toFixed(0)} ms (user ${w.userMs.toFixed(0)}, sys ${w.systemMs.toFixed(0)}) = ${per.toFixed(0)} µs/probe, ${f1((100 * w.cpuMs) / w.wallMs)}% of a core; event loop busy ${f1(100 * w.elu)}%`,
    `          lateness mean ${r.lateness.mean.toFixed(0)} ms, p99 ${r.lateness.p99.toFixed(0)}, max ${r.lateness.max.toFixed(0)}; backlog at end ${r.backlog.rows} rows (oldest ${r.backlog.oldestMs.toFixed(0)} ms); peak in flight ${r.peakInFlight}; rss ${r.rssMb.toFixed(0)} MB`,
    `          on disk at the end: probe_schedule ${f2(r.sizes.scheduleMb)} MB, line_health ${f2(r.sizes.healthMb)} MB, database ${f1(r.sizes.databaseMb)} MB`,
    `          PostgreSQL backends ${r.pgBackendCpuMs === null ? "in-process (PGlite)" : `${r.pgBackendCpuMs.toFixed(0)} ms = ${usPerProbe(r.pgBackendCpuMs, w.sent).toFixed(0)} µs/probe, ${f1((r.pgTransactions ?? 0) / w.sent)} transactions/probe`}; lab ${usPerProbe(r.labCpuMs, w.sent).toFixed(0)} µs/probe`,
    ...(r.statements
      ? [
          `          statements ${f2(Object.values(r.statements).reduce((a, b) => a + b, 0) / w.sent)}/probe: ${Object.entries(r.statements)
            .slice(0, 8)
            .map(([k, n]) => `${f2(n / w.sent)} ${k.split(" ").slice(0, 3).join(" ")}`)
            .join(" · ")}`,
        ]
      : []),
    ...(r.pgliteStatements
      ? [
          `          PGlite statements (count/probe, µs/probe): ${Object.entries(r.pgliteStatements)
            .filter(([k], i) => i < 8 || k.startsWith("vacuum"))
            .map(([k, e]) => `${k.split(" ").slice(0, 4).join(" ")} ${f2(e.n / w.sent)} ${usPerProbe(e.ms, w.sent).toFixed(0)}`)
            .join(" · ")}`,
        ]
      : []),
    `  warm-up: ${r.warmup.sent} probes, CPU ${r.warmup.cpuMs.toFixed(0)} ms = ${usPerProbe(r.warmup.cpuMs, r.warmup.sent).toFixed(0)} µs/probe; setup ${f1(r.setupMs / 1000)} s`,
  ].join("\n");
}

function floorLine(f: FloorResult): string {
  return `  ${f.sent} probes in ${f1(f.wallMs / 1000)} s = ${f1((f.sent * 1000) / f.wallMs)}/s (target ${f1(f.expectedPerSec)}); CPU ${f.cpuMs.toFixed(0)} ms = ${usPerProbe(f.cpuMs, f.sent).toFixed(0)} µs/probe, ${f1((100 * f.cpuMs) / f.wallMs)}% of a core${f.mode === "score" ? `; passed ${f1((100 * f.passed) / Math.max(1, f.sent))}%` : ""}`;
}

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    process.stderr.write(`probe-throughput: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    await cleanup();
    process.exit(1);
  },
);
