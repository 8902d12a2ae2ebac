// Dashboard weight and render time with many lines: a control plane with N lines (default 200) and
// H hours (default 6) of probe history at 4 probes per line per 45 s, opened in Debian's chromium.
// Prints figures; asserts nothing. PostgreSQL when DATABASE_URL is set, else PGlite.
//   npx tsx bench/dashboard/run.ts [--lines 200] [--hours 6] [--runs 5] [--screenshot /tmp/dashboard.png]
import { createDb, type Database } from "@linewatch/db";
import { sql } from "drizzle-orm";
import { chromium } from "playwright-core";
import { startTestControlPlane, type TestControlPlane } from "../../test/helpers/control-plane";
import type { TestDatabase } from "../../test/helpers/test-db";
import { benchArgs } from "../args";
import { scratchDatabase } from "../scratch-database";
import { retried, seed } from "./seed";

const args = benchArgs(import.meta.url, {
  lines: { type: "string", default: "200" },
  hours: { type: "string", default: "6" },
  runs: { type: "string", default: "5" },
  screenshot: { type: "string" },
});
const LINES = Number(args.lines);
const HOURS = Number(args.hours);
const RUNS = Number(args.runs);
const ADMIN = "bench-dashboard-admin-token-0123456789";

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};
const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

async function count(database: Database): Promise<number> {
  const r = await database.db.execute(sql`select count(*)::int as n from probe_results`);
  const rows = (Array.isArray(r) ? r : (r as { rows: unknown[] }).rows) as { n: number }[];
  return Number(rows[0]?.n ?? 0);
}

async function timeGet(cp: TestControlPlane, path: string): Promise<{ ms: number; bytes: number }> {
  const t = performance.now();
  const res = await retried(() => fetch(`${cp.url}${path}`, { headers: { authorization: `Bearer ${ADMIN}` } }));
  const body = await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  return { ms: performance.now() - t, bytes: body.byteLength };
}

// A database of the run's own (the test helpers' copies of a migrated template exist only under vitest).
const scratch = await scratchDatabase({ pgBase: process.env.DATABASE_URL ?? null, prefix: "lw_bench_dashboard" });
const testDb: TestDatabase = {
  kind: scratch.kind,
  url: scratch.kind === "postgres" ? scratch.url : undefined,
  dataDir: scratch.kind === "pglite" ? scratch.dataDir : "",
  open: () => createDb(scratch.kind === "postgres" ? { url: scratch.url } : { dataDir: scratch.dataDir }),
  dispose: scratch.drop,
};
const cp = await startTestControlPlane({ testDb, env: { LINEWATCH_ADMIN_TOKEN: ADMIN } });
try {
  const t0 = performance.now();
  const { lineIds } = await seed(cp, { lines: LINES, hours: HOURS, token: ADMIN });
  const rows = await count(cp.database);
  console.log(
    `seeded ${LINES} lines, ${rows} probe results (${HOURS} h) on ${cp.database.driver} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  // Server side: the first view computes the aggregates; later ones within a few seconds reuse them.
  const cold = await timeGet(cp, "/");
  const warm: number[] = [];
  for (let i = 0; i < RUNS; i++) warm.push((await timeGet(cp, "/")).ms);
  // A refresh after new probes: the aggregates re-read only the recent buckets (after the 4 s floor).
  const refreshed: number[] = [];
  for (let i = 0; i < Math.min(RUNS, 3); i++) {
    await cp.database.db.execute(
      sql`update probe_results set started_at = started_at + interval '1 millisecond' where id = (select id from probe_results order by started_at desc limit 1)`,
    );
    await new Promise((r) => setTimeout(r, 4_200));
    refreshed.push((await timeGet(cp, "/")).ms);
  }
  const poll: number[] = [];
  for (let i = 0; i < RUNS; i++) poll.push((await timeGet(cp, "/dashboard/state.json")).ms);
  const day = await timeGet(cp, "/?hours=24");
  const linePage: number[] = [];
  for (let i = 0; i < RUNS; i++) linePage.push((await timeGet(cp, `/lines/${lineIds[Math.min(10, lineIds.length - 1)]}`)).ms);

  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
  const runs: Record<string, number>[] = [];
  for (let i = 0; i < RUNS; i++) {
    // A fresh context each time: nothing cached, the whole page weighs in.
    const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    await context.addCookies([{ name: "lw_token", value: ADMIN, url: cp.url }]);
    const page = await context.newPage();
    const t = performance.now();
    await page.goto(`${cp.url}/`, { waitUntil: "load" });
    await page.waitForFunction(
      () => (globalThis as unknown as { __linewatch?: { renderedAt?: number } }).__linewatch?.renderedAt !== undefined,
    );
    const wall = performance.now() - t;
    const m = await page.evaluate(() => {
      type Entry = {
        transferSize: number;
        encodedBodySize: number;
        decodedBodySize: number;
        responseStart: number;
        responseEnd: number;
        domContentLoadedEventEnd: number;
        loadEventEnd: number;
      };
      const g = globalThis as unknown as {
        performance: { getEntriesByType(t: string): Entry[] };
        __linewatch: { renderedAt: number };
        document: { getElementsByTagName(t: string): { length: number } };
      };
      const nav = g.performance.getEntriesByType("navigation")[0]!;
      const res = g.performance.getEntriesByType("resource");
      const all = [nav, ...res];
      return {
        transfer: all.reduce((a, e) => a + e.transferSize, 0),
        encoded: all.reduce((a, e) => a + e.encodedBodySize, 0),
        decoded: all.reduce((a, e) => a + e.decodedBodySize, 0),
        htmlEncoded: nav.encodedBodySize,
        htmlDecoded: nav.decodedBodySize,
        requests: all.length,
        ttfb: nav.responseStart,
        dcl: nav.domContentLoadedEventEnd,
        load: nav.loadEventEnd,
        drawn: g.__linewatch.renderedAt,
        nodes: g.document.getElementsByTagName("*").length,
      };
    });
    runs.push({ ...m, wall });
    const shot = args.screenshot;
    if (shot && i === 0) await page.screenshot({ path: shot, fullPage: false });
    await context.close();
  }
  await browser.close();

  const med = (k: string) => median(runs.map((r) => r[k]!));
  console.log(
    `\nserver, ${LINES} lines (${rows} results), ms: GET / first ${cold.ms.toFixed(0)} · GET / again (median of ${RUNS}) ${median(warm).toFixed(0)} · GET / after new probes ${median(refreshed).toFixed(0)} · GET /?hours=24 first ${day.ms.toFixed(0)} · poll ${median(poll).toFixed(1)} · line page ${median(linePage).toFixed(0)}`,
  );
  console.log(`\nbrowser (median of ${RUNS} cold loads):`);
  console.log(
    "| page weight (transferred) | of it HTML | uncompressed | requests | DOM elements | first byte | DOMContentLoaded | load | charts drawn |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  console.log(
    `| ${kib(med("transfer"))} | ${kib(med("htmlEncoded"))} | ${kib(med("decoded"))} (HTML ${kib(med("htmlDecoded"))}) | ${med("requests")} | ${med("nodes")} | ${med("ttfb").toFixed(0)} ms | ${med("dcl").toFixed(0)} ms | ${med("load").toFixed(0)} ms | ${med("drawn").toFixed(0)} ms |`,
  );
} finally {
  await cp.stop();
  await cp.testDb.dispose();
}
