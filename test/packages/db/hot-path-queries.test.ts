// The prober's and health service's batched statements (one per batch instead of one per probe),
// on PGlite and, with DATABASE_URL, on PostgreSQL.
import { initialHealth, lineScore } from "@linewatch/core";
import {
  claimDueProbesWithContext,
  completeClaim,
  completeClaims,
  type Database,
  deleteScheduleRow,
  ensureLinesHealth,
  expediteProbe,
  getLineHealth,
  insertLine,
  insertRoute,
  insertSample,
  insertScheduleRows,
  lineResultsSince,
  listEvents,
  listSchedule,
  type ProbeResultInsert,
  readHealthForProbes,
  sampleHistories,
  setFastProbing,
  storeProbeResults,
  writeHealthIfUnchanged,
} from "@linewatch/db";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lineRow, probeResultRow } from "../../helpers/rows";
import { createTestDatabase, type TestDatabase } from "../../helpers/test-db";

let testDb: TestDatabase;
let database: Database;
let lineId: string;
let otherLineId: string;
const sampleIds: string[] = [];
const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);

const result = (sampleId: string, at: number, extra: Partial<ProbeResultInsert> = {}): ProbeResultInsert =>
  probeResultRow(lineId, sampleId, at, extra);

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = await testDb.open();
  const db = database.db;
  await insertRoute(db, { name: "chat", freeShareCap: 0.2, onAllDown: "fail-open", policy: null });
  const line = (name: string) => insertLine(db, lineRow(name));
  lineId = (await line("a")).id;
  otherLineId = (await line("b")).id;
  for (const [name, weight] of [
    ["s1", 1],
    ["s2", 3],
  ] as const) {
    const s = await insertSample(db, {
      name,
      protocol: "openai-chat",
      routes: [],
      request: { messages: [{ role: "user", content: "hi" }] },
      expect: {},
      timeoutMs: null,
      weight,
    });
    sampleIds.push(s.id);
  }
});

afterAll(async () => {
  await database?.close();
  await testDb?.dispose();
});

describe("storeProbeResults", () => {
  it("stores a batch and hands back exactly the rows stored (null for a slot stored already)", async () => {
    const db = database.db;
    const [s1, s2] = sampleIds as [string, string];
    const first = await storeProbeResults(db, [result(s1, T0, { slot: T0 }), result(s2, T0 + 1)], null);
    expect(first.map((r) => r?.sampleId)).toEqual([s1, s2]);
    expect(first[0]).toMatchObject({ lineId, startedAt: T0, score: 95.5, trigger: "schedule", components: { latency: 0.9 } });
    // The same slot again (another replica ran it) next to a new one.
    const second = await storeProbeResults(db, [result(s1, T0 + 2, { slot: T0 }), result(s1, T0 + 3)], null);
    expect(second[0]).toBeNull();
    expect(second[1]?.startedAt).toBe(T0 + 3);
    const rows = await lineResultsSince(db, lineId, new Date(T0 - 1));
    expect(rows.map((r) => r.id).sort()).toEqual([first[0]!.id, first[1]!.id, second[1]!.id].sort());
    expect(rows.find((r) => r.id === first[0]!.id)).toMatchObject({
      score: 95.5,
      components: first[0]!.components,
      excerpt: "fine",
      tokens: 42,
    });
  });

  it("mends what a text column would not take as JSON, and hands back what it stored", async () => {
    const db = database.db;
    const [stored] = await storeProbeResults(
      db,
      [result(sampleIds[0]!, T0 + 10, { excerpt: `cut in an emoji \ud83d and a NUL \u0000`, reasons: ["x\udc00"] })],
      null,
    );
    expect(stored?.excerpt).toBe("cut in an emoji \ufffd and a NUL \ufffd");
    const row = (await lineResultsSince(db, lineId, new Date(T0 + 10))).find((r) => r.id === stored!.id);
    expect(row?.excerpt).toBe(stored?.excerpt);
    expect(row?.reasons).toEqual(["x\ufffd"]);
  });

  it("hands claims back in the same statement, by completeClaim's rule", async () => {
    const db = database.db;
    const [s1, s2] = sampleIds as [string, string];
    await insertScheduleRows(db, [
      { lineId: otherLineId, sampleId: s1, nextAt: new Date(T0) },
      { lineId: otherLineId, sampleId: s2, nextAt: new Date(T0) },
    ]);
    const claimed = await claimDueProbesWithContext(db, "r1", new Date(T0 + 1), new Date(T0 + 60_000), 10);
    expect(claimed).toHaveLength(2);
    // A confirming probe asked for meanwhile: s2 keeps its earlier next_at and trigger, and is only released.
    await expediteProbe(db, otherLineId, s2, new Date(T0 - 500), "confirm");
    const out = await storeProbeResults(db, [], {
      replica: "r1",
      items: claimed.map((c) => ({ lineId: c.lineId, sampleId: c.sampleId, claimedAt: c.nextAt, nextAt: new Date(T0 + 45_000) })),
    });
    expect(out).toEqual([]);
    const rows = (await listSchedule(db)).filter((r) => r.lineId === otherLineId);
    const bySample = new Map(rows.map((r) => [r.sampleId, r]));
    expect(bySample.get(s1)).toMatchObject({ nextAt: new Date(T0 + 45_000), trigger: "schedule" });
    expect(bySample.get(s2)).toMatchObject({ nextAt: new Date(T0 - 500), trigger: "confirm" });
    // Released: both can be claimed again when due; a claim by another replica is left alone.
    const again = await claimDueProbesWithContext(db, "r2", new Date(T0 + 1), new Date(T0 + 60_000), 10);
    expect(again.map((c) => c.sampleId)).toEqual([s2]);
    await completeClaims(db, "r1", [{ lineId: otherLineId, sampleId: s2, claimedAt: again[0]!.nextAt, nextAt: new Date(T0 + 90_000) }]);
    expect((await listSchedule(db)).find((r) => r.lineId === otherLineId && r.sampleId === s2)?.nextAt).toEqual(new Date(T0 - 500));
    await completeClaim(db, "r2", otherLineId, s2, again[0]!.nextAt, new Date(T0 + 90_000));
    expect((await listSchedule(db)).find((r) => r.lineId === otherLineId && r.sampleId === s2)).toMatchObject({
      nextAt: new Date(T0 + 90_000),
      trigger: "schedule",
    });
  });
});

describe("sampleHistories", () => {
  it("gives each pair its latest results after a time, newest first, at most `limit`", async () => {
    const db = database.db;
    const [s1, s2] = sampleIds as [string, string];
    const base = T0 + 100_000;
    await storeProbeResults(
      db,
      [0, 1, 2, 3, 4].map((i) => result(s2, base + i * 1000, { contentLength: 100 + i, passed: i !== 2, hardFailure: i === 4 })),
      null,
    );
    const all = await sampleHistories(
      db,
      [
        { lineId, sampleId: s2, after: null },
        { lineId, sampleId: s1, after: new Date(T0 + 3) },
      ],
      3,
    );
    const s2rows = all.filter((r) => r.sampleId === s2);
    expect(s2rows.map((r) => r.startedAt)).toEqual([base + 4000, base + 3000, base + 2000]);
    expect(s2rows[0]).toMatchObject({ lineId, contentLength: 104, latencyMs: 100, hardFailure: true, contentHash: `h-${base + 4000}` });
    expect(s2rows[2]?.passed).toBe(false);
    expect(all.filter((r) => r.sampleId === s1).map((r) => r.startedAt)).toEqual([T0 + 10]);
    expect(await sampleHistories(db, [{ lineId, sampleId: s2, after: new Date(base + 4000) }], 20)).toEqual([]);
  });
});

describe("claimDueProbesWithContext", () => {
  it("claims due rows with the newest result of their pair and whether their line probes fast", async () => {
    const db = database.db;
    const [s1, s2] = sampleIds as [string, string];
    for (const s of sampleIds) await deleteScheduleRow(db, otherLineId, s);
    // Phases a quarter and three quarters into an 80 s interval: regular slots at +20 s and +60 s.
    await insertScheduleRows(db, [
      { lineId, sampleId: s1, nextAt: new Date(T0 + 100_000), phase: 0.25 },
      { lineId, sampleId: s2, nextAt: new Date(T0 + 140_000), phase: 0.75 },
    ]);
    await ensureLinesHealth(db, [
      { lineId, health: { ...initialHealth(T0), fastProbeUntil: T0 + 999_999 }, state: "healthy", now: new Date(T0) },
    ]);
    await ensureLinesHealth(db, [{ lineId: otherLineId, health: initialHealth(T0), state: "healthy", now: new Date(T0) }]);
    // A trend alert's effect, applied at T0 + 65 s with a 40 s fast interval: each pending slot comes
    // forward to its own phase's next fast slot (offsets 10 s and 30 s of 40 s), not onto one slot.
    await setFastProbing(db, lineId, new Date(T0 + 999_999), new Date(T0 + 65_000), 40_000);
    expect((await listSchedule(db)).filter((r) => r.lineId === lineId).map((r) => [r.sampleId, r.nextAt.getTime() - T0, r.phase])).toEqual(
      expect.arrayContaining([
        [s1, 90_000, 0.25],
        [s2, 70_000, 0.75],
      ]),
    );
    expect(await claimDueProbesWithContext(db, "r1", new Date(T0 + 69_999), new Date(T0 + 300_000), 10)).toEqual([]);
    const claimed = await claimDueProbesWithContext(db, "r1", new Date(T0 + 70_000), new Date(T0 + 300_000), 10);
    expect(claimed.map((c) => c.sampleId)).toEqual([s2]);
    const rest = await claimDueProbesWithContext(db, "r1", new Date(T0 + 90_000), new Date(T0 + 300_000), 10);
    const both = [...claimed, ...rest].sort((a, b) => a.sampleId.localeCompare(b.sampleId));
    const newest = new Map([
      [s1, T0 + 10],
      [s2, T0 + 104_000],
    ]);
    const slots = new Map([
      [s1, T0 + 90_000],
      [s2, T0 + 70_000],
    ]);
    for (const c of both) {
      expect(c).toMatchObject({
        lineId,
        nextAt: new Date(slots.get(c.sampleId)!),
        trigger: "schedule",
        newestResultAt: newest.get(c.sampleId),
      });
      expect(c.fast).toBe(true);
    }
    // The same window, claimed after it closed or while the line is in cooldown: not fast.
    await completeClaims(
      db,
      "r1",
      both.map((c) => ({ lineId, sampleId: c.sampleId, claimedAt: c.nextAt, nextAt: new Date(T0 + 2_000_000) })),
    );
    const late = await claimDueProbesWithContext(db, "r1", new Date(T0 + 2_000_000), new Date(T0 + 2_100_000), 10);
    expect(late.map((c) => c.fast)).toEqual([false, false]);
    await completeClaims(
      db,
      "r1",
      late.map((c) => ({ lineId, sampleId: c.sampleId, claimedAt: c.nextAt, nextAt: new Date(T0 + 400_000) })),
    );
    await db.execute(sql`update line_health set state = 'cooldown' where line_id = ${lineId}`);
    const cooling = await claimDueProbesWithContext(db, "r1", new Date(T0 + 400_000), new Date(T0 + 500_000), 10);
    expect(cooling.map((c) => c.fast)).toEqual([false, false]);
    await db.execute(sql`update line_health set state = 'healthy' where line_id = ${lineId}`);
    await completeClaims(
      db,
      "r1",
      cooling.map((c) => ({ lineId, sampleId: c.sampleId, claimedAt: c.nextAt, nextAt: new Date(T0 + 200_000) })),
    );
  });
});

describe("readHealthForProbes and writeHealthIfUnchanged", () => {
  it("reads health with per-sample sums that give core's line score", async () => {
    const db = database.db;
    const since = new Date(T0 - 1);
    const until = new Date(T0 + 500_000);
    const [row] = await readHealthForProbes(db, [lineId], since, until);
    expect(row).toMatchObject({ lineId, revision: 0, health: { fastProbeUntil: T0 + 999_999 } });
    const results = await lineResultsSince(db, lineId, since);
    const now = T0 + 500_000;
    const fromRows = lineScore(results, now, 600_000);
    const fromSums = lineScore(
      row!.sums.map((x) => ({ startedAt: now, score: x.scoreSum / x.count, weight: x.weight * x.count })),
      now,
      600_000,
    );
    expect(fromSums).toBe(fromRows);
    expect(row!.sums.reduce((a, x) => a + x.count, 0)).toBe(results.length);
    expect(await readHealthForProbes(db, [], since, until)).toEqual([]);
  });

  it("writes health and its events only where the revision is the one read", async () => {
    const db = database.db;
    const at = new Date(T0 + 1000);
    // Each write marks its health with a line score of its own, to tell which one landed.
    const write = (id: string, expectedRevision: number, mark: number) => ({
      lineId: id,
      expectedRevision,
      health: { ...initialHealth(T0), lineScore: mark },
      state: "healthy",
      score: 88.8,
      revision: expectedRevision + 1,
      tickAt: null,
      updatedAt: at,
    });
    const event = (id: string, key: string) => ({
      at,
      kind: "state_change",
      lineId: id,
      routeName: null,
      reason: "test",
      data: { key },
      dedupeKey: key,
    });
    // otherLineId is at revision 0; claim 5 for it: only lineId is written, and only its event recorded.
    const written = await writeHealthIfUnchanged(
      db,
      [write(lineId, 0, 1), write(otherLineId, 5, 99)],
      [event(lineId, "cas-1"), event(otherLineId, "cas-2")],
    );
    expect([...written]).toEqual([lineId]);
    expect(await getLineHealth(db, lineId)).toMatchObject({ revision: 1, health: { lineScore: 1 }, score: 88.8, state: "healthy" });
    expect(await getLineHealth(db, otherLineId)).toMatchObject({ revision: 0, health: { lineScore: null } });
    const keys = (await listEvents(db, { limit: 50 })).map((e) => e.dedupeKey);
    expect(keys).toContain("cas-1");
    expect(keys).not.toContain("cas-2");
    // The same revision again writes nothing.
    expect([...(await writeHealthIfUnchanged(db, [write(lineId, 0, 2)], []))]).toEqual([]);
    expect((await getLineHealth(db, lineId))?.health?.lineScore).toBe(1);
  });
});
