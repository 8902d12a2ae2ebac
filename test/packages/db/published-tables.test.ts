// How a published table is stored (issue 16 item 2): lines without the duplicated lineId, compressed
// with lz4 where the server has it; read back the same whatever the shape or compression. On PGlite
// and, with DATABASE_URL, on PostgreSQL.
import type { PublishedLine, PublishedTable } from "@linewatch/core";
import { canCompressLz4, type Database, executeRows, linePatches, listPublishedTables, writePublishedTables } from "@linewatch/db";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../helpers/test-db";

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = await testDb.open();
});

afterAll(async () => {
  await database?.close();
  await testDb?.dispose();
});

/** A table big enough to be compressed (TOAST starts at 2 kB). */
const table = (route: string, version: number): PublishedTable<PublishedLine> => ({
  route,
  version,
  generatedAt: Date.UTC(2026, 11, 2, 6, 0, 0, version),
  mode: "normal",
  lines: Array.from({ length: 100 }, (_, i) => {
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
    return {
      lineId: id,
      id,
      weight: 100,
      name: `line-${i}`,
      tier: "paid",
      state: "healthy",
      protocol: "openai-chat",
      baseUrl: `https://upstream-${i % 7}.example.com/v1`,
      model: "m",
      credentials: `rev-${i}`,
    };
  }),
});

const stored = async (route: string) =>
  executeRows<{ lines: Record<string, unknown>[]; compression: string | null }>(
    await database.db.execute(
      sql`select lines, pg_column_compression(lines) as compression from published_tables where route_name = ${route}`,
    ),
  )[0];

describe("writePublishedTables", () => {
  it("stores lines without lineId and reads them back as written", async () => {
    const t = table("r-shape", 1);
    await database.db.transaction((tx) => writePublishedTables(tx, [t], [], "test_tables"));
    const row = await stored("r-shape");
    expect(row?.lines).toHaveLength(100);
    for (const l of row?.lines ?? [])
      expect(Object.keys(l).sort()).toEqual(
        Object.keys(t.lines[0]!)
          .filter((k) => k !== "lineId")
          .sort(),
      );
    expect((await listPublishedTables(database.db)).find((s) => s.route === "r-shape")?.table).toEqual(t);
  });

  it("compresses with lz4 when asked and the server has it; either compression reads the same", async () => {
    const lz4 = await canCompressLz4(database.db);
    if (database.driver === "pglite") expect(lz4).toBe(false); // built without lz4
    await database.db.transaction((tx) => writePublishedTables(tx, [table("r-pglz", 1)], [], "test_tables"));
    await database.db.transaction((tx) => writePublishedTables(tx, [table("r-lz4", 1)], [], "test_tables", { lz4 }));
    expect((await stored("r-pglz"))?.compression).toBe("pglz");
    expect((await stored("r-lz4"))?.compression).toBe(lz4 ? "lz4" : "pglz");
    // Only for that transaction: the next statement compresses as the server's default does.
    await database.db.transaction((tx) => writePublishedTables(tx, [table("r-pglz", 2)], [], "test_tables"));
    expect((await stored("r-pglz"))?.compression).toBe("pglz");
    const read = await listPublishedTables(database.db);
    expect(read.find((s) => s.route === "r-lz4")?.table).toEqual(table("r-lz4", 1));
    expect(read.find((s) => s.route === "r-pglz")?.table).toEqual(table("r-pglz", 2));
  });

  it("sends only what changed when the stored row is the previous version, and stores what a whole write would", async () => {
    const v1 = table("r-patch", 1);
    const whole1 = table("r-whole", 1);
    await database.db.transaction((tx) => writePublishedTables(tx, [v1, whole1], [], "test_tables"));
    // Every weight changed, one line's state and name too, the mode as well.
    const next = (route: string, version: number): PublishedTable<PublishedLine> => {
      const t = table(route, version);
      return {
        ...t,
        mode: "degraded",
        lines: t.lines.map((l, i) => (i === 3 ? { ...l, weight: 7, state: "cooldown", name: "renamed" } : { ...l, weight: 100 + i })),
      };
    };
    const v2 = next("r-patch", 2);
    const patches = linePatches(v1, v2);
    expect(patches?.[0]).toEqual({}); // 100 before and after
    expect(patches?.[1]).toEqual({ weight: 101 });
    expect(patches?.[3]).toEqual({ weight: 7, state: "cooldown", name: "renamed" });
    await database.db.transaction((tx) =>
      writePublishedTables(tx, [v2, next("r-whole", 2)], [], "test_tables", { previous: new Map([["r-patch", v1]]) }),
    );
    const [patched, whole] = [await stored("r-patch"), await stored("r-whole")];
    expect(patched?.lines).toEqual(whole?.lines);
    const read = await listPublishedTables(database.db);
    expect(read.find((s) => s.route === "r-patch")?.table).toEqual(v2);
    // Other lines or another order: the whole table goes.
    expect(linePatches(v2, { ...v2, lines: [...v2.lines].reverse() })).toBeNull();
    expect(linePatches(v2, { ...v2, lines: v2.lines.slice(1) })).toBeNull();
    expect(linePatches({ ...v2, lines: [] }, { ...v2, version: 3, lines: [] })).toBeNull(); // nothing to patch: written whole
  });

  it("fails the write, rather than patch it, when the stored row is not the version named", async () => {
    await database.db.transaction((tx) => writePublishedTables(tx, [table("r-moved", 1)], [], "test_tables"));
    await database.db.transaction((tx) => writePublishedTables(tx, [table("r-moved", 2)], [], "test_tables"));
    // A publisher that believes version 1 is stored.
    const v3 = { ...table("r-moved", 3), mode: "panic" as const };
    await expect(
      database.db.transaction((tx) =>
        writePublishedTables(tx, [v3], [], "test_tables", { previous: new Map([["r-moved", table("r-moved", 1)]]) }),
      ),
    ).rejects.toThrow(/not the version patched/);
    expect((await listPublishedTables(database.db)).find((s) => s.route === "r-moved")?.table).toEqual(table("r-moved", 2));
  });
});
