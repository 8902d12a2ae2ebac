// How a published table is stored (issue 16 item 2): lines without the duplicated lineId, compressed
// with lz4 where the server has it; read back the same whatever the shape or compression. On PGlite
// and, with DATABASE_URL, on PostgreSQL.
import type { PublishedLine, PublishedTable } from "@linewatch/core";
import { canCompressLz4, type Database, executeRows, listPublishedTables, writePublishedTables } from "@linewatch/db";
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
});
