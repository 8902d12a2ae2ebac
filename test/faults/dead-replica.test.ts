import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canRunPrivatePostgres } from "../helpers/private-postgres";
import { type ControlPlaneProcess, startControlPlaneProcess } from "../helpers/process";
import { createLines, createRoute, eventually, faultDatabase, inspect } from "./support";

// Issue 15 item 6: two replicas on one PostgreSQL, one killed with SIGKILL while it has probes in
// flight. The (line, sample) pairs it held are probed again by the survivor within docs/tables.md's bound
// (2 intervals + timeout from the previous probe), through the heartbeats, not after a lease of
// timeout + 30 s; and no slot is stored twice.
const INTERVAL_SEC = 6;
const TIMEOUT_MS = 4_000;
const names = Array.from({ length: 12 }, (_, i) => `line-${String(i).padStart(2, "0")}`);

let database: { url: string; dispose(): Promise<void> };
let lab: Lab;
let a: ControlPlaneProcess;
let b: ControlPlaneProcess;
let db: ReturnType<typeof inspect>;
const secretKey = "c".repeat(64);

beforeAll(async () => {
  database = await faultDatabase();
  // Slow answers: a replica nearly always has probes in flight.
  lab = await startLab({ lines: names.map((name) => ({ name, baseLatencyMs: 1_500 })) });
  db = inspect(database.url);
  a = await startControlPlaneProcess({ databaseUrl: database.url, replicaId: "survivor", secretKey });
  b = await startControlPlaneProcess({ databaseUrl: database.url, replicaId: "doomed", secretKey });
  await createRoute(a, "chat");
  await createLines(
    a,
    "chat",
    names.map((name) => ({ name, baseUrl: lab.baseUrl(name), probeIntervalSec: INTERVAL_SEC, timeoutMs: TIMEOUT_MS })),
  );
}, 180_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await db?.close();
  await lab?.close();
  await database?.dispose();
});

describe.skipIf(!process.env.DATABASE_URL && !canRunPrivatePostgres())("a replica killed mid-probe", () => {
  it("has its claims picked up by the survivor within 2 intervals + timeout, each slot stored once", async () => {
    const held = () =>
      db.sql<{ line_id: string; sample_id: string; next_at: Date }[]>`
        select line_id, sample_id, next_at from probe_schedule where claimed_by = 'doomed'`;
    const atDeath = await eventually(
      async () => {
        const rows = await held();
        return rows.length >= 2 ? rows : undefined;
      },
      60_000,
      20,
    );
    await b.kill9();
    const stillHeld = await held();
    expect(stillHeld.length).toBeGreaterThan(0);
    const killedAt = Date.now();

    // Each pair the dead replica held is probed again (stored by the survivor), and in time.
    const bound = 2 * INTERVAL_SEC * 1000 + TIMEOUT_MS;
    const gaps = await eventually(async () => {
      const out: { pair: string; gapMs: number }[] = [];
      for (const r of stillHeld) {
        const rows = await db.sql<{ started_at: Date }[]>`
            select started_at from probe_results where line_id = ${r.line_id} and sample_id = ${r.sample_id}
            order by started_at desc limit 2`;
        const [next, previous] = rows;
        if (!next || next.started_at.getTime() < killedAt || !previous) return undefined;
        out.push({ pair: `${r.line_id}/${r.sample_id}`, gapMs: next.started_at.getTime() - previous.started_at.getTime() });
      }
      return out;
    }, 60_000);
    expect(atDeath.length).toBeGreaterThan(0);
    expect(gaps.filter((g) => g.gapMs > bound)).toEqual([]);
    expect(a.logs().some((l) => l.msg.includes("released the claims of replicas that stopped beating"))).toBe(true);
    expect(await db.duplicateSlots()).toEqual([]);
  }, 240_000);
});
