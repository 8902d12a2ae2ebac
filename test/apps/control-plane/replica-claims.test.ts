// Issue 15 item 6: the claims of a dead process. A restarted embedded control plane takes its old
// claims back at once; on a shared database a replica that stopped beating loses its claims after
// REPLICA_STALE_MS (not a lease of timeout + 30 s); and a probe that finishes after its claim moved
// is not stored a second time. Time is a manual clock; the database is real (PGlite or PostgreSQL).

import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import {
  claimDueProbesWithContext,
  heartbeatAndReleaseDead,
  insertLine,
  insertSample,
  listSchedule,
  storeProbeResults,
} from "@linewatch/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPLICA_STALE_MS } from "../../../apps/control-plane/src/prober/prober";
import { goneOnThisHost } from "../../../apps/control-plane/src/prober/restart-claims";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { ManualClock } from "../../helpers/manual-clock";
import { lineRow, probeResultRow } from "../../helpers/rows";
import { createTestDatabase } from "../../helpers/test-db";
import { queryRows } from "./security/helpers";

const clock = new ManualClock();
let cp: TestControlPlane;
let lineId = "";

const claims = async () =>
  (await listSchedule(cp.database.db)).length > 0
    ? await queryRows<{ claimed_by: string | null }>(cp.database, "select claimed_by from probe_schedule order by sample_id")
    : [];
/** Every schedule row claimed by `replica`, until far in the future (a lease that would not end soon). */
const claimAllAs = (replica: string) =>
  queryRows(
    cp.database,
    `update probe_schedule set claimed_by = '${replica}', claimed_until = '${new Date(clock.now() + 3_600_000).toISOString()}'`,
  );

beforeAll(async () => {
  // Persistent: restart() reopens the same database, as a restarted process would.
  const testDb = await createTestDatabase({ persistent: true });
  cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" }, clock, testDb });
  expect((await cp.request("/v1/routes", { method: "POST", json: { name: "chat" } })).status).toBe(201);
  lineId = (await insertLine(cp.database.db, lineRow("l1", { probeIntervalSec: 10 }))).id;
  for (const name of ["s1", "s2"]) {
    await insertSample(cp.database.db, {
      name,
      protocol: "openai-chat",
      routes: [],
      request: { messages: [{ role: "user", content: "hi" }] },
      expect: {},
      timeoutMs: null,
      weight: 1,
    });
  }
  await cp.engine.registry.changed();
  await cp.engine.prober.reconcile();
  expect(await listSchedule(cp.database.db)).toHaveLength(2);
});

afterAll(async () => {
  await cp.stop();
  await cp.testDb.dispose();
});

describe("claims of a process that died", () => {
  it("on the embedded database, a restart releases them at once, whatever id the old process had", async () => {
    if (cp.testDb.kind !== "pglite") return; // PostgreSQL: the case below (replicas share it)
    await claimAllAs("cp-4242-old");
    cp = await cp.restart();
    expect((await claims()).map((c) => c.claimed_by)).toEqual([null, null]);
  });

  it("on a shared database, are released once the replica stopped beating for REPLICA_STALE_MS, and not before", async () => {
    await claimAllAs("replica-dead");
    const db = cp.database.db;
    // Both replicas beat; then the dead one stops.
    await heartbeatAndReleaseDead(db, "replica-dead", new Date(clock.now()), null);
    let released = 0;
    for (let t = 0; t <= REPLICA_STALE_MS + 4_000; t += 2_000) {
      released += await cp.engine.prober.heartbeat();
      if (t < REPLICA_STALE_MS)
        expect(
          (await claims()).map((c) => c.claimed_by),
          `at ${t} ms`,
        ).toEqual(["replica-dead", "replica-dead"]);
      clock.advance(2_000);
    }
    expect(released).toBe(2);
    expect((await claims()).map((c) => c.claimed_by)).toEqual([null, null]);
  });

  it("a live replica's claims stay; a replica back from a gap of its own judges no one until it has beaten steadily", async () => {
    const db = cp.database.db;
    await claimAllAs("replica-live");
    for (let t = 0; t <= REPLICA_STALE_MS * 2; t += 2_000) {
      await heartbeatAndReleaseDead(db, "replica-live", new Date(clock.now()), null);
      await cp.engine.prober.heartbeat();
      clock.advance(2_000);
    }
    expect((await claims()).map((c) => c.claimed_by)).toEqual(["replica-live", "replica-live"]);
    // This replica stalls (or the database was away) longer than the stale period: every other
    // replica's last beat looks old now, but that says nothing about them yet.
    clock.advance(REPLICA_STALE_MS * 3);
    expect(await cp.engine.prober.heartbeat()).toBe(0);
    await heartbeatAndReleaseDead(db, "replica-live", new Date(clock.now()), null);
    for (let t = 0; t <= REPLICA_STALE_MS; t += 2_000) {
      clock.advance(2_000);
      await heartbeatAndReleaseDead(db, "replica-live", new Date(clock.now()), null);
      expect(await cp.engine.prober.heartbeat()).toBe(0);
    }
    expect((await claims()).map((c) => c.claimed_by)).toEqual(["replica-live", "replica-live"]);
  });

  it("a starting replica takes over at once the claims of a replica on its host whose process is gone, whatever its id", async () => {
    const db = cp.database.db;
    const host = hostname();
    const goneChild = spawnSync(process.execPath, ["-e", "0"]).pid; // exited: no process has its pid now
    const rows = ["gone", "alive", "elsewhere", "previous-life"];
    const sampleRows = await queryRows<{ sample_id: string }>(cp.database, "select sample_id from probe_schedule order by sample_id");
    expect(sampleRows).toHaveLength(2);
    const beat = (id: string, where: { host: string; pid: number }) => heartbeatAndReleaseDead(db, id, new Date(clock.now()), null, where);
    await beat("gone", { host, pid: goneChild });
    await beat("alive", { host, pid: process.ppid }); // the test runner: alive
    await beat("elsewhere", { host: "another-host", pid: goneChild });
    await beat("previous-life", { host, pid: process.pid }); // this process's pid, a replica it does not run
    for (const [k, id] of ["gone", "previous-life"].entries())
      await queryRows(
        cp.database,
        `update probe_schedule set claimed_by = '${id}', claimed_until = '${new Date(clock.now() + 3_600_000).toISOString()}' where sample_id = '${sampleRows[k]!.sample_id}'`,
      );
    expect(await cp.engine.prober.takeOverGone()).toBe(2);
    expect((await claims()).map((c) => c.claimed_by)).toEqual([null, null]);
    const left = await queryRows<{ id: string }>(cp.database, `select id from replicas where id in ('${rows.join("','")}') order by id`);
    expect(left.map((r) => r.id)).toEqual(["alive", "elsewhere"]);
    // A live replica's claims stay (and one on another host is the heartbeats' to judge).
    await claimAllAs("alive");
    expect(await cp.engine.prober.takeOverGone()).toBe(0);
    expect((await claims()).map((c) => c.claimed_by)).toEqual(["alive", "alive"]);
    await queryRows(cp.database, "update probe_schedule set claimed_by = null, claimed_until = null");
  });

  it("the restart rule: gone pids, this pid when this process does not run that replica; not its own id, not an unknown pid", () => {
    const self = { id: "me", host: "h", pid: 100 };
    const rows = [
      { id: "me", pid: 100 },
      { id: "dead", pid: 7 },
      { id: "live", pid: 8 },
      { id: "old-life", pid: 100 },
      { id: "sibling", pid: 100 },
      { id: "old-version", pid: null },
    ];
    expect(goneOnThisHost(rows, self, (pid) => pid === 8, new Set(["me", "sibling"]))).toEqual(["dead", "old-life"]);
  });

  it("a probe that finishes after its claim moved to another replica is not stored twice, and leaves that claim alone", async () => {
    const db = cp.database.db;
    await queryRows(cp.database, "update probe_schedule set claimed_by = null, claimed_until = null");
    const now = new Date(clock.now() + 3_600_000); // everything is due
    const lease = new Date(now.getTime() + 60_000);
    const [first] = await claimDueProbesWithContext(db, "replica-slow", now, lease, 1);
    expect(first).toBeDefined();
    // replica-slow is taken for dead; its claim goes to replica-fast, for the same slot.
    await queryRows(cp.database, "update probe_schedule set claimed_by = null, claimed_until = null where claimed_by = 'replica-slow'");
    const [again] = await claimDueProbesWithContext(db, "replica-fast", now, lease, 1);
    expect(again).toMatchObject({ lineId: first!.lineId, sampleId: first!.sampleId, nextAt: first!.nextAt });
    const result = (at: number) => probeResultRow(first!.lineId, first!.sampleId, at, { slot: first!.nextAt.getTime() });
    const done = (replica: string) => ({
      replica,
      items: [{ lineId: first!.lineId, sampleId: first!.sampleId, claimedAt: first!.nextAt, nextAt: new Date(now.getTime() + 10_000) }],
    });
    const fast = await storeProbeResults(db, [result(now.getTime() + 5)], done("replica-fast"));
    expect(fast[0]).not.toBeNull();
    const slow = await storeProbeResults(db, [result(now.getTime() + 1)], done("replica-slow"));
    expect(slow).toEqual([null]);
    const rows = await queryRows<{ n: number }>(
      cp.database,
      `select count(*)::int as n from probe_results where line_id = '${lineId}' and slot = ${first!.nextAt.getTime()}`,
    );
    expect(rows[0]!.n).toBe(1);
  });
});
