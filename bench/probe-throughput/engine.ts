// One control plane under load, in its own process so process.cpuUsage() is its own: the real
// composition (startControlPlane: HTTP API, engine, node-cron scheduler) on PostgreSQL or PGlite,
// `lines` lab lines × the 4 shipped samples at `intervalSec`. It waits `warmupSec` (the first
// cycle: cold baselines, first health rows), then measures `seconds`.
//   argv: JSON EngineOptions; stdout: `RESULT <json>` (EngineResult)
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { performance } from "node:perf_hooks";
import { createDb, insertLine, insertRoute } from "@linewatch/db";
import { sql } from "drizzle-orm";
import { loadConfig } from "../../apps/control-plane/src/config";
import { systemClock } from "../../apps/control-plane/src/deps";
import { createLogger } from "../../apps/control-plane/src/logger";
import { createSecretBox } from "../../apps/control-plane/src/secrets";
import { serveControlPlane } from "../../apps/control-plane/src/server";
import { cpuMsSince, lineName, type ProbingOptions, printResult, runChild, sleep } from "./shared";

export interface EngineOptions extends ProbingOptions {
  db: "postgres" | "pglite";
  /** postgres: the database URL; pglite: a data directory. */
  url?: string;
  dataDir?: string;
  linesPerRoute: number;
  /** Write a V8 CPU profile of the measured window here (the figures then include the profiler's cost). */
  profile?: string;
}

/** Statements sent to PostgreSQL (postgres.js only), counted by their first words. */
function countStatements(db: unknown): Map<string, number> {
  const counts = new Map<string, number>();
  type Client = { unsafe: (...a: unknown[]) => unknown; begin?: (...a: unknown[]) => unknown };
  const wrap = (client: Client) => {
    const unsafe = client.unsafe.bind(client);
    client.unsafe = (...a: unknown[]) => {
      const key = String(a[0]).replace(/\s+/g, " ").trim().slice(0, 60);
      counts.set(key, (counts.get(key) ?? 0) + 1);
      return unsafe(...a);
    };
    if (client.begin) {
      const begin = client.begin.bind(client);
      client.begin = (...a: unknown[]) => {
        counts.set("begin … commit", (counts.get("begin … commit") ?? 0) + 1);
        const fn = a[a.length - 1] as (c: Client) => unknown;
        return begin(...a.slice(0, -1), (c: Client) => {
          wrap(c);
          return fn(c);
        });
      };
    }
  };
  wrap((db as { session: { client: Client } }).session.client);
  return counts;
}

/**
 * PGlite only: statements run in this process, by their first words, with the milliseconds each kind
 * took (PGlite answers on this thread, so that is CPU the control plane spends in its database).
 */
function timePglite(db: unknown): Map<string, { n: number; ms: number }> {
  const timed = new Map<string, { n: number; ms: number }>();
  type Client = { query: (...a: unknown[]) => Promise<unknown>; transaction?: (fn: (tx: Client) => Promise<unknown>) => Promise<unknown> };
  const note = (key: string, ms: number) => {
    const e = timed.get(key) ?? { n: 0, ms: 0 };
    e.n++;
    e.ms += ms;
    timed.set(key, e);
  };
  const wrap = (client: Client) => {
    const query = client.query.bind(client);
    client.query = async (...a: unknown[]) => {
      const t = performance.now();
      try {
        return await query(...a);
      } finally {
        note(String(a[0]).replace(/\s+/g, " ").trim().slice(0, 60), performance.now() - t);
      }
    };
    if (client.transaction) {
      const transaction = client.transaction.bind(client);
      client.transaction = async (fn) => {
        const t = performance.now();
        try {
          return await transaction((tx) => {
            wrap(tx);
            return fn(tx);
          });
        } finally {
          note("begin … commit (whole transaction)", performance.now() - t);
        }
      };
    }
  };
  wrap((db as { session: { client: Client } }).session.client);
  return timed;
}

export interface PhaseFigures {
  wallMs: number;
  cpuMs: number;
  userMs: number;
  systemMs: number;
  /** Probes the prober sent (scheduled and confirming). */
  sent: number;
  /** Results stored with a start in the phase, from the database. */
  stored: number;
  /** Share of the phase the event loop was busy. */
  elu: number;
}

export interface EngineResult {
  db: string;
  lines: number;
  samples: number;
  expectedPerSec: number;
  setupMs: number;
  warmup: PhaseFigures;
  window: PhaseFigures;
  /** Scheduled probes in the window: how late they started after their slot (ms). */
  lateness: { mean: number; p99: number; max: number };
  /** Due rows not yet claimed when the window closed, and how overdue the oldest was (ms). */
  backlog: { rows: number; oldestMs: number };
  passedShare: number;
  peakInFlight: number;
  rssMb: number;
  /** Size on disk at the end (MB): the schedule and health tables (rewritten with every probe) and the whole database. */
  sizes: { scheduleMb: number; healthMb: number; databaseMb: number };
  /** Results stored per (trigger) in the window. */
  byTrigger: Record<string, number>;
  /** PostgreSQL only: statements in the window, by their first words (a transaction counts its statements and once as "begin … commit"). */
  statements: Record<string, number> | null;
  /** PGlite only: statements in the window by their first words, with their count and milliseconds (a transaction's statements count inside it too). */
  pgliteStatements: Record<string, { n: number; ms: number }> | null;
}

const opts = JSON.parse(process.argv[2] ?? "{}") as EngineOptions;

async function main() {
  const t0 = performance.now();
  const database = await createDb(opts.db === "postgres" ? { url: opts.url } : { dataDir: opts.dataDir ?? "memory" });
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    LINEWATCH_SCHEDULER: "true",
    LINEWATCH_MAX_IN_FLIGHT: String(opts.maxInFlight),
    ...(opts.db === "postgres" ? { DATABASE_URL: opts.url } : { LINEWATCH_DATA_DIR: opts.dataDir }),
  });
  const cp = await serveControlPlane({
    config,
    database,
    clock: systemClock,
    logger: createLogger("warn"),
    secrets: createSecretBox(randomBytes(32).toString("hex")),
  });
  const db = database.db;
  const statements = opts.db === "postgres" ? countStatements(db) : null;
  const pgliteTimes = opts.db === "pglite" ? timePglite(db) : null;

  const routeCount = Math.ceil(opts.lines / opts.linesPerRoute);
  const routeNames = Array.from({ length: routeCount }, (_, r) => `route-${String(r).padStart(3, "0")}`);
  for (const name of routeNames) await insertRoute(db, { name, freeShareCap: 0.2, onAllDown: "fail-open", policy: null });
  for (let i = 0; i < opts.lines; i++) {
    const name = lineName(i);
    await insertLine(db, {
      name,
      tier: i % 4 === 3 ? "free" : "paid",
      protocol: "openai-chat",
      baseUrl: `${opts.labUrl}/lines/${name}/v1`,
      model: "lab-model",
      apiKeyEnc: null,
      headers: {},
      routes: [{ route: routeNames[Math.floor(i / opts.linesPerRoute)]!, weight: 10 }],
      probeIntervalSec: opts.intervalSec,
      timeoutMs: null,
      dailyQuota: null,
      probeBudgetPct: 5,
      maxShare: null,
      adminState: "active",
    });
  }
  await cp.engine.registryChanged(routeNames);
  const snapshot = await cp.engine.registry.get();
  const samples = snapshot.samples.size;
  const setupMs = performance.now() - t0;

  const count = async (from: number, to: number) => {
    const rows = await db.execute(
      sql`select count(*)::int as n from probe_results where started_at >= ${new Date(from).toISOString()}::timestamptz and started_at < ${new Date(to).toISOString()}::timestamptz`,
    );
    const list = (Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows) as { n: number }[];
    return Number(list[0]?.n ?? 0);
  };

  const phase = async (ms: number, onStart?: () => Promise<void>, onEnd?: () => Promise<void>) => {
    const wallStart = Date.now();
    await onStart?.();
    if (onStart) process.stdout.write("WINDOW start\n");
    const cpu = process.cpuUsage();
    const elu = performance.eventLoopUtilization();
    const sent = cp.engine.prober.stats().sent;
    const start = performance.now();
    await sleep(ms);
    const c = cpuMsSince(cpu);
    const figures = {
      wallMs: performance.now() - start,
      cpuMs: c.totalMs,
      userMs: c.userMs,
      systemMs: c.systemMs,
      sent: cp.engine.prober.stats().sent - sent,
      elu: performance.eventLoopUtilization(elu).utilization,
      stored: 0,
    };
    if (onStart) process.stdout.write("WINDOW-END end\n");
    await onEnd?.();
    return { figures, from: wallStart, to: Date.now() };
  };

  const warm = await phase(opts.warmupSec * 1000);
  statements?.clear();
  pgliteTimes?.clear();
  warm.figures.stored = await count(warm.from, warm.to);

  let session: Session | null = null;
  const measured = await phase(
    opts.seconds * 1000,
    async () => {
      if (!opts.profile) return;
      session = new Session();
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.start");
    },
    async () => {
      if (!session || !opts.profile) return;
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(opts.profile, JSON.stringify(profile));
      session.disconnect();
    },
  );
  const { from, to } = measured;
  const counted = statements ? Object.fromEntries([...statements].sort((a, b) => b[1] - a[1])) : null;
  const pgliteStatements = pgliteTimes ? Object.fromEntries([...pgliteTimes].sort((a, b) => b[1].ms - a[1].ms)) : null;
  measured.figures.stored = await count(from, to);

  const rowsOf = (r: unknown) => (Array.isArray(r) ? r : (r as { rows: unknown[] }).rows) as Record<string, unknown>[];
  const lateRows = rowsOf(
    await db.execute(sql`
      select coalesce(avg(extract(epoch from started_at) * 1000 - slot), 0)::float8 as mean,
             coalesce(percentile_cont(0.99) within group (order by extract(epoch from started_at) * 1000 - slot), 0)::float8 as p99,
             coalesce(max(extract(epoch from started_at) * 1000 - slot), 0)::float8 as max
      from probe_results
      where trigger = 'schedule' and slot is not null
        and started_at >= ${new Date(from).toISOString()}::timestamptz and started_at < ${new Date(to).toISOString()}::timestamptz`),
  );
  const sizeRows = rowsOf(
    await db.execute(sql`
      select pg_total_relation_size('probe_schedule')::float8 / 1e6 as schedule, pg_total_relation_size('line_health')::float8 / 1e6 as health,
             pg_database_size(current_database())::float8 / 1e6 as database`),
  );
  const backlogRows = rowsOf(
    await db.execute(sql`
      select count(*)::int as rows, coalesce(extract(epoch from (now() - min(next_at))) * 1000, 0)::float8 as oldest
      from probe_schedule where next_at < now() and claimed_by is null`),
  );
  const passRows = rowsOf(
    await db.execute(sql`
      select trigger, count(*)::int as n, sum(case when passed then 1 else 0 end)::int as passed from probe_results
      where started_at >= ${new Date(from).toISOString()}::timestamptz and started_at < ${new Date(to).toISOString()}::timestamptz
      group by trigger`),
  );
  const byTrigger = Object.fromEntries(passRows.map((r) => [String(r.trigger), Number(r.n)]));
  const total = passRows.reduce((a, r) => a + Number(r.n), 0);
  const passed = passRows.reduce((a, r) => a + Number(r.passed), 0);
  const late = lateRows[0] ?? {};
  const backlog = backlogRows[0] ?? {};

  const result: EngineResult = {
    db: opts.db,
    lines: opts.lines,
    samples,
    expectedPerSec: (opts.lines * samples) / opts.intervalSec,
    setupMs,
    warmup: warm.figures,
    window: measured.figures,
    lateness: { mean: Number(late.mean), p99: Number(late.p99), max: Number(late.max) },
    backlog: { rows: Number(backlog.rows), oldestMs: Math.max(0, Number(backlog.oldest)) },
    passedShare: total > 0 ? passed / total : 0,
    peakInFlight: cp.engine.prober.stats().peakInFlight,
    rssMb: process.memoryUsage().rss / 1e6,
    sizes: { scheduleMb: Number(sizeRows[0]?.schedule), healthMb: Number(sizeRows[0]?.health), databaseMb: Number(sizeRows[0]?.database) },
    byTrigger,
    statements: counted,
    pgliteStatements,
  };
  await cp.close();
  await database.close();
  printResult(result);
}

runChild("engine", main);
