import { executeRows } from "@linewatch/db";
import { type Lab, startLab } from "@linewatch/lab";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { ManualClock } from "../../helpers/manual-clock";

// The embedded PGlite runs no autovacuum: every probe's schedule and health updates leave a dead
// row version behind, and retention's deletes free nothing, unless the control plane vacuums.
// Sizes are what an operator sees grow in LINEWATCH_DATA_DIR.
const LINES = 3;
const embedded = !process.env.DATABASE_URL;

let lab: Lab;
let cp: TestControlPlane;
const clock = new ManualClock();

beforeAll(async () => {
  lab = await startLab({ lines: Array.from({ length: LINES }, (_, i) => ({ name: `l${i}` })) });
  cp = await startTestControlPlane({ clock, env: { LINEWATCH_RETENTION_DAYS: "1" } });
  await createRoute(cp, "chat");
  for (let i = 0; i < LINES; i++)
    await createLine(cp, { name: `l${i}`, baseUrl: lab.baseUrl(`l${i}`), routes: [{ route: "chat", weight: 1 }], probeIntervalSec: 45 });
  await cp.engine.prober.reconcile();
}, 60_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

/** One interval of probing: every (line, sample) once, with the results stored and applied. */
async function probeRounds(n: number, after?: (round: number) => Promise<unknown>): Promise<void> {
  for (let round = 1; round <= n; round++) {
    clock.advance(45_000);
    await cp.engine.tick();
    await cp.engine.prober.drain();
    await after?.(round);
  }
}

/**
 * Bytes of these tables' rows and indexes (not the free-space and visibility maps, which the first
 * VACUUM creates once).
 */
async function bytes(...tables: string[]): Promise<number> {
  const result = await cp.database.db.execute(
    sql.raw(`select ${tables.map((t) => `pg_relation_size('${t}', 'main') + pg_indexes_size('${t}')`).join(" + ")} as n`),
  );
  return Number(executeRows<{ n: string | number }>(result)[0]?.n);
}

describe.skipIf(!embedded)("embedded database upkeep (PGlite)", () => {
  it("vacuums the schedule and health tables, so probing stops growing them", async () => {
    await probeRounds(2);
    const results0 = await bytes("probe_results");
    const start = await bytes("probe_schedule", "line_health");
    // Without vacuum the rewritten tables only grow …
    await probeRounds(40);
    const unvacuumed = await bytes("probe_schedule", "line_health");
    expect(unvacuumed).toBeGreaterThan(start);
    // … with it (every 10 intervals here, every minute in service) the space of dead rows is reused.
    expect(await cp.engine.vacuumEmbedded()).toBe(true);
    await probeRounds(40, (round) => (round % 10 === 0 ? cp.engine.vacuumEmbedded() : Promise.resolve()));
    expect(await bytes("probe_schedule", "line_health")).toBeLessThanOrEqual(unvacuumed);
    // Results are rows added, not rewritten: they grew, and every probe was stored.
    expect(await bytes("probe_results")).toBeGreaterThan(results0);
    expect(lab.stats("l0").requests).toBe(82 * 4);
  }, 120_000);

  it("reuses the space retention frees instead of growing the results table", async () => {
    // The results so far are over a day old after this; retention deletes them and vacuums.
    clock.advance(2 * 86_400_000);
    await probeRounds(1);
    const full = await bytes("probe_results");
    expect(await cp.engine.pruneProbeResults()).toBeGreaterThan(300);
    // 720 results go where the 996 deleted ones were: without the vacuum they would add about
    // nearly three quarters of the table again; with it, at most a page or two of a right-growing index.
    await probeRounds(60);
    expect(await bytes("probe_results")).toBeLessThan(full * 1.1);
  }, 120_000);
});

describe.skipIf(embedded)("embedded database upkeep on PostgreSQL", () => {
  it("is left to PostgreSQL's autovacuum", async () => {
    expect(await cp.engine.vacuumEmbedded()).toBe(false);
  });
});
