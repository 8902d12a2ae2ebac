// Line row versions (the registry cache's whole reload reads them and fetches only the rows whose
// version moved), on PGlite and, with DATABASE_URL, on PostgreSQL.
import { type Database, insertLine, insertRoute, listLineRows, listLineVersions, listVersionedLineRows } from "@linewatch/db";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lineRow } from "../../helpers/rows";
import { createTestDatabase, type TestDatabase } from "../../helpers/test-db";

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = await testDb.open();
  const db = database.db;
  for (const name of ["chat", "b-route"]) await insertRoute(db, { name, freeShareCap: 0.2, onAllDown: "fail-open", policy: null });
  await insertLine(db, lineRow("c", { maxShare: 0.3, headers: { "x-a": true }, timeoutMs: 1234 }));
  await insertLine(
    db,
    lineRow("a", {
      routes: [
        { route: "chat", weight: 2 },
        { route: "b-route", weight: 7 },
      ],
    }),
  );
  await insertLine(db, lineRow("b", { routes: [] }));
});

afterAll(async () => {
  await database?.close();
  await testDb?.dispose();
});

describe("listLineVersions and listVersionedLineRows", () => {
  it("list what listLineRows lists, by name, with each line's memberships", async () => {
    const db = database.db;
    const rows = await listLineRows(db);
    const versions = await listLineVersions(db);
    expect(versions.map((v) => v.id)).toEqual(rows.map((r) => r.row.id));
    expect(versions.map((v) => v.routes)).toEqual(rows.map((r) => r.routes));
    expect(versions.find((v) => v.id === rows[0]?.row.id)?.routes).toEqual([
      { route: "b-route", weight: 7 },
      { route: "chat", weight: 2 },
    ]);
    const all = await listVersionedLineRows(db, "all");
    expect(all.map(({ row, routes }) => ({ row, routes }))).toEqual(rows);
    expect(all.map((r) => r.version)).toEqual(versions.map((v) => v.version));
    const only = await listVersionedLineRows(db, { only: [rows[2]!.row.id, rows[0]!.row.id] });
    expect(only.map((r) => r.row)).toEqual([rows[0]!.row, rows[2]!.row]);
    const ofRoute = await listVersionedLineRows(db, { routes: ["b-route"], ids: [rows[1]!.row.id] });
    expect(ofRoute.map(({ row, routes }) => ({ row, routes }))).toEqual([rows[0], rows[1]]);
  });

  it("a line's version moves with every write of its row (one that changes nothing too), and only its", async () => {
    const db = database.db;
    const before = new Map((await listLineVersions(db)).map((v) => [v.id, v.version]));
    expect(new Map((await listLineVersions(db)).map((v) => [v.id, v.version]))).toEqual(before);
    const [c] = (await listLineRows(db)).filter((r) => r.row.name === "c");
    await db.execute(sql`update lines set model = model where name = 'c'`);
    // A membership is not the row: its weight comes with the versions.
    await db.execute(sql`update route_lines set weight = weight + 1`);
    const after = await listLineVersions(db);
    for (const v of after) {
      if (v.id === c!.row.id) expect(v.version).not.toBe(before.get(v.id));
      else expect(v.version).toBe(before.get(v.id));
    }
    expect(after.find((v) => v.id === c!.row.id)?.routes).toEqual([{ route: "chat", weight: 11 }]);
  });
});
