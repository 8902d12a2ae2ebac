// The embedded database's first start: initdb runs in a child process (so the control plane does
// not keep its ~800 MB peak: bench/memory) with PGLITE_SETTINGS, and a directory it cannot use is a
// clear error. Slow suite: one initdb takes 5–50 s on this machine, with the load of a test run.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDb, executeRows } from "@linewatch/db";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";

const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "lw-pglite-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(process.env.DATABASE_URL)("embedded PGlite: a new data directory", { timeout: 180_000 }, () => {
  it("a new directory: initdb in a child writes the settings into postgresql.conf; migrated and reopened", async () => {
    const dir = join(newDir(), "data");
    const first = await createDb({ dataDir: dir });
    expect(existsSync(join(dir, "PG_VERSION"))).toBe(true);
    expect(readFileSync(join(dir, "postgresql.conf"), "utf8")).toMatch(/^shared_buffers = 16MB/m);
    expect(executeRows<{ shared_buffers: string }>(await first.db.execute(sql`show shared_buffers`))[0]?.shared_buffers).toBe("16MB");
    await first.close();
    const again = await createDb({ dataDir: dir });
    expect(executeRows<{ n: number }>(await again.db.execute(sql`select count(*)::int as n from lines`))[0]?.n).toBe(0);
    await again.close();
  });

  it("a directory initdb cannot use: a clear error naming it, no crash", async () => {
    const dir = newDir();
    // A file where initdb makes its folders.
    writeFileSync(join(dir, "base"), "not a folder");
    const error = await createDb({ dataDir: dir }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(String(error)).toContain(`could not create the PGlite database in ${dir}: initdb failed`);
    expect(String(error)).toContain("not a directory");
  });
});
