import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canRunPrivatePostgres, type PrivatePostgres, startPrivatePostgres } from "../helpers/private-postgres";
import { type ControlPlaneProcess, startControlPlaneProcess } from "../helpers/process";
import { createLines, createRoute, eventually, getTable, inspect, pause } from "./support";

// Issue 7: PostgreSQL stopped for 20 s and started again mid-run. The cluster is this test's own,
// so stopping it never disturbs the machine's shared server (other suites run against it meanwhile).
const OUTAGE_MS = Number(process.env.LINEWATCH_OUTAGE_SEC ?? 20) * 1000;
const LINES = ["paid-a", "paid-b", "free-a", "free-b"];

let pg: PrivatePostgres;
let lab: Lab;
let cp: ControlPlaneProcess;
let db: ReturnType<typeof inspect>;
let ids: Map<string, string>;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  const url = await pg.createDatabase();
  // Slow answers, so probes are in flight when the database goes away.
  lab = await startLab({ lines: LINES.map((name) => ({ name, baseLatencyMs: 300 })) });
  cp = await startControlPlaneProcess({ databaseUrl: url, replicaId: "outage-a" });
  db = inspect(url);
  await createRoute(cp, "chat");
  ids = await createLines(
    cp,
    "chat",
    LINES.map((name) => ({ name, tier: name.startsWith("paid") ? "paid" : "free", baseUrl: lab.baseUrl(name), probeIntervalSec: 4 })),
  );
}, 120_000);

afterAll(async () => {
  await cp?.stop();
  await db?.close();
  await lab?.close();
  await pg?.dispose();
});

describe.skipIf(!canRunPrivatePostgres())("PostgreSQL outage of 20 s", () => {
  it("answers /readyz 503, serves tables from memory, then resumes probing with nothing lost or duplicated and no restart", async () => {
    // Warm up: every line probed with every sample, a table published.
    await eventually(async () => {
      const rows = await db.lastProbeAt();
      return rows.length === LINES.length * 4 && rows.every((r) => r.at !== null);
    }, 60_000);
    // Each line in service once its samples' results are applied (docs/health.md#new-lines).
    let states: string[] = [];
    const before = await eventually(async () => {
      const t = await getTable(cp, "chat");
      states = t.body?.lines.map((l) => l.state) ?? [];
      return t.body?.lines.every((l) => l.state === "healthy") ? t : undefined;
    }, 30_000).catch((error: unknown) => {
      throw new Error(`lines not in service: ${states.join(", ")}; ${String(error)}`);
    });
    expect(before.status).toBe(200);
    expect(before.body!.lines.map((l) => l.state)).toEqual(["healthy", "healthy", "healthy", "healthy"]);
    // The new lines' events (first probe, probation complete, tables) are written as their results are
    // applied: read the timeline once it has settled, so what comes after is the outage's.
    let eventsBefore = await db.events();
    await eventually(async () => {
      await pause(1_000);
      const now = await db.events();
      const settled = now.length === eventsBefore.length;
      eventsBefore = now;
      return settled;
    }, 30_000);
    const resultsBefore = await db.resultsPerLine();
    const pid = cp.pid;

    await pg.stop();
    const outageStart = Date.now();
    // A long-poll that was waiting when the database went away keeps waiting and answers 304.
    const longPoll = cp.request("/v1/tables/chat?waitSec=5", { headers: { "if-none-match": before.etag! } });
    const seen = {
      readyz: new Set<number>(),
      table: new Set<number>(),
      conditional: new Set<number>(),
      list: new Set<number>(),
      healthz: new Set<number>(),
    };
    let firstNotReady: number | null = null;
    while (Date.now() - outageStart < OUTAGE_MS) {
      const ready = await cp.request("/readyz");
      seen.readyz.add(ready.status);
      if (ready.status === 503) {
        firstNotReady ??= Date.now() - outageStart;
        const body = (await ready.json()) as { error: { code: string } };
        expect(body.error.code).toBe("unavailable");
      } else await ready.text();
      const t = await getTable(cp, "chat");
      seen.table.add(t.status);
      if (t.status === 200) {
        expect(t.body!.version).toBe(before.body!.version);
        expect(t.etag).toBe(before.etag);
      }
      const cond = await cp.request("/v1/tables/chat", { headers: { "if-none-match": before.etag! } });
      seen.conditional.add(cond.status);
      await cond.text();
      const list = await cp.request("/v1/tables");
      seen.list.add(list.status);
      await list.text();
      const live = await cp.request("/healthz");
      seen.healthz.add(live.status);
      await live.text();
      await pause(250);
    }
    const held = await longPoll;
    expect.soft(held.status).toBe(304);
    expect.soft([...seen.readyz]).toEqual([503]);
    expect.soft(firstNotReady).not.toBeNull();
    expect.soft([...seen.table]).toEqual([200]);
    expect.soft([...seen.conditional]).toEqual([304]);
    expect.soft([...seen.list]).toEqual([200]);
    expect.soft([...seen.healthz]).toEqual([200]);
    expect.soft(cp.alive()).toBe(true);
    expect.soft(cp.logs().some((l) => l.msg.includes("serving the last registry snapshot"))).toBe(true);

    await pg.start();
    const restarted = new Date();
    await eventually(async () => (await cp.request("/readyz")).status === 200, 30_000);
    // Probing resumes on its own: every (line, sample) is probed again. Most within a few intervals;
    // the deadline covers one claim lease (50 s here), because now and then a probe caught by the
    // outage never settles its database calls (seen at HEAD, under investigation) and its slot
    // comes back only when the lease ends. The slot is then stored once all the same (checked below).
    await eventually(async () => {
      const rows = await db.lastProbeAt();
      if (rows.length === LINES.length * 4 && rows.every((r) => r.at !== null && r.at >= restarted)) return true;
      const stuck = rows.filter((r) => !r.at || r.at < restarted);
      const detail = await Promise.all(
        stuck.map(async (r) => ({
          schedule:
            await db.sql`select next_at, trigger, claimed_by, claimed_until from probe_schedule where line_id = ${r.line_id} and sample_id = ${r.sample_id}`,
          results:
            await db.sql`select started_at, slot, trigger from probe_results where line_id = ${r.line_id} and sample_id = ${r.sample_id} order by started_at desc limit 5`,
        })),
      );
      throw new Error(`not probed since the restart (${restarted.toISOString()}): ${JSON.stringify(stuck)} ${JSON.stringify(detail)}`);
    }, 80_000);

    // The same process all along, nothing lost, nothing twice.
    expect(cp.pid).toBe(pid);
    expect(cp.alive()).toBe(true);
    expect(await db.duplicateSlots()).toEqual([]);
    const resultsAfter = await db.resultsPerLine();
    for (const name of LINES) expect(resultsAfter.get(name)!).toBeGreaterThan(resultsBefore.get(name)!);
    const eventsAfter = await db.events();
    expect(eventsAfter.slice(0, eventsBefore.length)).toEqual(eventsBefore);
    const keys = eventsAfter.map((e) => e.dedupe_key).filter((k) => k !== null);
    expect(new Set(keys).size).toBe(keys.length);
    // The database was down, not the lines: no line changed state because of it.
    expect(eventsAfter.slice(eventsBefore.length).filter((e) => e.kind === "state_change")).toEqual([]);
    const after = await getTable(cp, "chat");
    expect(after.status).toBe(200);
    expect(after.body!.version).toBe(before.body!.version);
    const lines = (await (await cp.request("/v1/lines")).json()) as { lines: { id: string }[] };
    expect(lines.lines.map((l) => l.id).sort()).toEqual([...ids.values()].sort());
    expect(cp.stderr()).toBe("");
  }, 180_000);
});
