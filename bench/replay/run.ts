// Policy replay speed (docs/replay.md, issue 13): results replayed per second and peak memory for 1 h,
// 6 h and 24 h of a fleet of 1000 lines × 4 samples at 45 s, on PostgreSQL or PGlite. The baseline,
// measured in the same run over the same range: reading the same rows through the same keyset pages
// without replaying them (the database floor). Bounded: data generation stops at --gen-budget-sec
// and the hours it did not reach are left out (the figures say so). 127.0.0.1 only.
//
//   npx tsx bench/replay/run.ts [--db postgres|pglite] [--hours 1,6,24] [--lines 1000] [--gen-budget-sec 600] [--json out.json]
//
// Data: one insert … select generate_series per hour (bulk, server side). Lines bench-0000… on 10
// routes of 100 (2 free per route); every 20th line fails every probe (hard failure) for 10 min of
// every 2 h, every 7th line fails one sample in 8 at random-looking slots (stray failures).

import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createDb, type Database, executeRows, replayResultPages } from "@linewatch/db";
import { sql } from "drizzle-orm";
import { loadConfig } from "../../apps/control-plane/src/config";
import { silentLogger } from "../../apps/control-plane/src/logger";
import { RegistryCache } from "../../apps/control-plane/src/registry-cache";
import { runReplay } from "../../apps/control-plane/src/replay/run-replay";
import { createSecretBox } from "../../apps/control-plane/src/secrets";
import { benchArgs } from "../args";
import { scratchDatabase } from "../scratch-database";

const args = benchArgs(import.meta.url, {
  db: { type: "string", default: "postgres" },
  hours: { type: "string", default: "1,6,24" },
  lines: { type: "string", default: "1000" },
  "gen-budget-sec": { type: "string", default: "600" },
  json: { type: "string" },
  /** Use this database as it is (kept after the run): the data is generated only when it has none. */
  url: { type: "string" },
  /** Skip the read-only baselines (pages, COPY): the replay's figures only. */
  "no-baseline": { type: "boolean", default: false },
  /** Worker threads for the replay (default: the control plane's default); 1: none. */
  workers: { type: "string" },
});
const usePg = args.db !== "pglite";

// The replay's worker threads run from the bundle `npm start` runs (build.mjs): through tsx they
// would pay its per-closure name bookkeeping. This thread (the read and the split) stays on tsx.
const bundleDir = mkdtempSync(join(fileURLToPath(new URL("../../apps/control-plane/dist/", import.meta.url)), "bench-replay-"));
execFileSync(process.execPath, [
  fileURLToPath(new URL("../../apps/control-plane/build.mjs", import.meta.url)),
  fileURLToPath(new URL("../../apps/control-plane/src/main.ts", import.meta.url)),
  join(bundleDir, "main.mjs"),
]);
(globalThis as { __linewatchWorkers?: Record<string, string> }).__linewatchWorkers = {
  "replay-worker": pathToFileURL(join(bundleDir, "main.replay-worker.mjs")).href,
};
process.once("exit", () => rmSync(bundleDir, { recursive: true, force: true }));
const hoursWanted = (args.hours ?? "1,6,24")
  .split(",")
  .map(Number)
  .sort((a, b) => a - b);
const LINES = Number(args.lines);
const SAMPLES = 4;
const INTERVAL_S = 45;
const ROUTES = 10;
const GEN_BUDGET_MS = Number(args["gen-budget-sec"]) * 1000;
const out = (s: string) => process.stdout.write(`${s}\n`);
const pgBase = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

const cleanups: (() => Promise<void>)[] = [];
async function freshDatabase(): Promise<Database> {
  if (args.url) return createDb({ url: args.url, maxConnections: 4 });
  const db = await scratchDatabase({ pgBase: usePg ? pgBase : null, prefix: "lw_bench_replay" });
  cleanups.push(db.drop);
  return db.kind === "postgres" ? createDb({ url: db.url, maxConnections: 4 }) : createDb({ dataDir: db.dataDir });
}

/** Peak RSS and heap while `fn` runs, sampled every 50 ms, above what they were before it. */
async function measured<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; peakRssMb: number; peakHeapMb: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage();
  let rss = base.rss;
  let heap = base.heapUsed;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
  }, 50);
  const t0 = performance.now();
  try {
    const value = await fn();
    return { value, ms: performance.now() - t0, peakRssMb: (rss - base.rss) / 2 ** 20, peakHeapMb: (heap - base.heapUsed) / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

const database = await freshDatabase();
const db = database.db;
try {
  const now = Date.now();
  const maxHours = hoursWanted.at(-1) ?? 1;
  // The data ends a minute before now, so every range is within the retention.
  const end = Math.floor((now - 60_000) / 1000) * 1000;
  let start = end - maxHours * 3_600_000;
  // A kept database (--url) that already holds results: use them as they are.
  const [held] = executeRows<{ lo: number | null; hi: number | null }>(
    await db.execute(
      sql`select (extract(epoch from min(started_at)) * 1000)::float8 as lo, (extract(epoch from max(started_at)) * 1000)::float8 as hi from probe_results`,
    ),
  );
  const reuse = held?.lo !== null && held?.lo !== undefined && held.hi !== null;
  if (reuse) start = Math.round(held.lo as number);

  // Registry: routes, lines (2 free per route), samples.
  if (!reuse) for (let r = 0; r < ROUTES; r++) await db.execute(sql`insert into routes (name) values (${`r${r}`})`);
  if (!reuse)
    await db.execute(sql`insert into lines (name, tier, protocol, base_url, model)
    select 'bench-' || lpad(n::text, 4, '0'), case when n % 50 < 2 then 'free' else 'paid' end, 'openai-chat', 'http://127.0.0.1:9/v1', 'm'
    from generate_series(0, ${LINES - 1}::int) n`);
  if (!reuse)
    await db.execute(sql`insert into route_lines (route_name, line_id, weight)
    select 'r' || (substr(name, 7)::int % ${ROUTES}), id, 100 from lines`);
  if (!reuse)
    await db.execute(sql`insert into samples (name, protocol, request, expect)
    select 's' || n, 'openai-chat', '{}'::jsonb, '{}'::jsonb from generate_series(0, ${SAMPLES - 1}::int) n`);

  // Results, an hour per statement, until the budget is spent.
  const slotsPerHour = 3600 / INTERVAL_S;
  const gen0 = performance.now();
  let hoursMade = reuse ? Math.floor(((held?.hi as number) - start) / 3_600_000) : 0;
  for (let h = 0; h < maxHours && !reuse; h++) {
    if (performance.now() - gen0 > GEN_BUDGET_MS) break;
    const t0 = performance.now();
    await db.execute(sql`insert into probe_results (line_id, sample_id, started_at, latency_ms, status, error_class, hard_failure, passed, score, components, content_length, excerpt, reasons, slot, trigger)
      select l.id, s.id, to_timestamp(${start / 1000}::float8 + k * ${INTERVAL_S} + (ln % 45) + sn * 11.25),
        case when bad then 10000 else 700 + (ln * 7 + k) % 900 end,
        case when bad then 500 else 200 end,
        case when bad then 'http_status' else null end,
        bad, not (bad or stray), case when bad then 0 when stray then 55 else 92 end,
        case when bad then '{"length":0,"fields":0,"freshness":0,"status":0,"latency":0}'::jsonb
             else '{"length":1,"fields":0.9,"freshness":1,"status":1,"latency":0.8}'::jsonb end,
        300, '', '[]'::jsonb, null, 'schedule'
      from (select id, substr(name, 7)::int as ln from lines) l
      cross join (select id, substr(name, 2)::int as sn from samples) s
      cross join generate_series(${h * slotsPerHour}::int, ${(h + 1) * slotsPerHour - 1}::int) k
      cross join lateral (select
        (l.ln % 20 = 0 and (k % 160) between 40 and 53) as bad,
        (l.ln % 7 = 0 and ((k * 31 + l.ln + s.sn) % 8) = 0) as stray) f`);
    hoursMade = h + 1;
    out(`generated hour ${h + 1}/${maxHours} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  if (!reuse) await db.execute(sql`analyze probe_results`);
  const genSec = (performance.now() - gen0) / 1000;

  const config = loadConfig({ LINEWATCH_RETENTION_DAYS: "7", LOG_LEVEL: "silent" });
  const deps = {
    config,
    database,
    clock: { now: () => now },
    logger: silentLogger,
    secrets: createSecretBox(randomBytes(32).toString("hex")),
  };
  const snapshot = await new RegistryCache(deps).get();
  const rows: Record<string, unknown>[] = [];
  out(
    `\n${usePg ? "PostgreSQL" : "PGlite"}: ${LINES} lines × ${SAMPLES} samples every ${INTERVAL_S} s; ${hoursMade} h generated in ${genSec.toFixed(0)} s`,
  );
  // The COPY reader, where this tree has one (the script also runs on a checkout from before it).
  const copy = usePg
    ? await import("../../apps/control-plane/src/replay/copy-results").catch(() => null as null | Record<string, never>)
    : null;
  const client = copy && "postgresClient" in copy ? copy.postgresClient(database) : null;
  out(
    "hours  results     pages read (rows/s)  COPY read (rows/s)   replay (rows/s)   replay s   day (min)   peak RSS +MB   peak heap +MB   load   report",
  );
  for (const hours of hoursWanted) {
    if (hours > hoursMade) {
      out(`${String(hours).padEnd(6)} not generated within the budget (see the extrapolation in bench/README.md)`);
      continue;
    }
    const range = { from: new Date(start), to: new Date(start + hours * 3_600_000), lineIds: null };
    const baseline = !args["no-baseline"];
    const read = await measured(async () => {
      if (!baseline) return 0;
      let n = 0;
      for await (const page of replayResultPages(db, range)) n += page.length;
      return n;
    });
    const copyRead =
      baseline && client && copy && "copyResultBatches" in copy
        ? await measured(async () => {
            let n = 0;
            for await (const batch of copy.copyResultBatches(client, { from: start, to: start + hours * 3_600_000, lineIds: null }))
              n += batch.length;
            return n;
          })
        : null;
    const replay = await measured(() =>
      runReplay(
        deps,
        snapshot,
        { from: range.from.toISOString(), to: range.to.toISOString(), policy: { failCount: 3 } },
        args.workers ? { workers: Number(args.workers) } : {},
      ),
    );
    const n = replay.value.results;
    const replayRowsPerSec = Math.round(n / (replay.ms / 1000));
    const row = {
      hours,
      results: n,
      readRowsPerSec: Math.round(read.value / (read.ms / 1000)),
      copyReadRowsPerSec: copyRead ? Math.round(copyRead.value / (copyRead.ms / 1000)) : null,
      replayRowsPerSec,
      replaySec: Math.round(replay.ms / 100) / 10,
      /** A day of the fleet (7.68 M results) at this rate, in minutes. */
      dayMin: Math.round((7_678_458 / replayRowsPerSec / 60) * 10) / 10,
      replayOverRead: Math.round((replay.ms / read.ms) * 100) / 100,
      load1: Math.round((loadavg()[0] ?? 0) * 10) / 10,
      /** The report's digest: the same history and policy give the same bytes, before and after. */
      report: createHash("sha256").update(JSON.stringify(replay.value)).digest("hex").slice(0, 12),
      peakRssMb: Math.round(replay.peakRssMb),
      peakHeapMb: Math.round(replay.peakHeapMb),
      cooldowns: replay.value.lines.reduce((a, l) => a + l.proposed.cooldowns.length, 0),
      episodes: replay.value.episodes.length,
    };
    rows.push(row);
    out(
      `${String(hours).padEnd(6)} ${String(n).padEnd(11)} ${String(row.readRowsPerSec).padEnd(20)} ${String(row.copyReadRowsPerSec ?? "—").padEnd(20)} ${String(row.replayRowsPerSec).padEnd(17)} ${String(row.replaySec).padEnd(10)} ${String(row.dayMin).padEnd(11)} ${String(row.peakRssMb).padEnd(14)} ${String(row.peakHeapMb).padEnd(15)} ${String(row.load1).padEnd(6)} ${row.report}`,
    );
  }
  const result = {
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model,
      loadavg: loadavg().map((l) => Math.round(l * 10) / 10),
      node: process.version,
    },
    db: usePg ? "postgres" : "pglite",
    lines: LINES,
    hoursGenerated: hoursMade,
    generateSec: Math.round(genSec),
    rows,
  };
  if (args.json) writeFileSync(args.json, JSON.stringify(result, null, 2));
} finally {
  await database.close();
  if (!args.url) for (const c of cleanups) await c();
}
