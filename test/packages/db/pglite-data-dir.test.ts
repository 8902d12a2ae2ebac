// PGlite runs with PGLITE_SETTINGS. A new data directory (initdb in a child process) is
// test/faults/pglite-data-dir.test.ts, in the slow suite: an initdb takes 5–50 s here.
import { type createDb, executeRows, PGLITE_SETTINGS } from "@linewatch/db";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../helpers/test-db";

const sharedBuffers = async (database: Awaited<ReturnType<typeof createDb>>) =>
  executeRows<{ shared_buffers: string }>(await database.db.execute(sql`show shared_buffers`))[0]?.shared_buffers;

describe.skipIf(process.env.DATABASE_URL)("embedded PGlite data directory", () => {
  it("PGLITE_SETTINGS hold for a database made before them too (a copy of the test template)", async () => {
    expect(PGLITE_SETTINGS).toContain("shared_buffers=16MB");
    const testDb = await createTestDatabase();
    const database = await testDb.open();
    try {
      expect(await sharedBuffers(database)).toBe("16MB");
    } finally {
      await database.close();
      await testDb.dispose();
    }
  });
});
