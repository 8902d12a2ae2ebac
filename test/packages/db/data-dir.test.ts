// Issue 15 item 5: the embedded data directory is the owner's alone, fresh or found open.
import { chmodSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDb } from "@linewatch/db";
import { afterAll, describe, expect, it } from "vitest";

const root = mkdtempSync(join(tmpdir(), "linewatch-data-dir-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every mode under `dir` (itself included), counted: e.g. { "700": 27, "600": 974 }. */
async function modes(dir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const paths = [dir, ...(await readdir(dir, { recursive: true })).map((p) => join(dir, p))];
  for (const p of paths) {
    const m = (statSync(p).mode & 0o777).toString(8);
    out[m] = (out[m] ?? 0) + 1;
  }
  return out;
}

describe("the PGlite data directory", () => {
  const dir = join(root, "nested", "data");

  it("is created 0700 with every file 0600, whatever the umask", async () => {
    const database = await createDb({ dataDir: dir, migrate: false });
    await database.close();
    const seen = await modes(dir);
    expect(Object.keys(seen).sort()).toEqual(["600", "700"]);
    expect(seen["600"]).toBeGreaterThan(100); // PGlite's own files, not only the folder
  });

  it("found open to others, is made owner-only at start and says so", async () => {
    chmodSync(dir, 0o777);
    const files = (await readdir(dir, { recursive: true })).map((p) => join(dir, p)).filter((p) => statSync(p).isFile());
    for (const f of files.slice(0, 10)) chmodSync(f, 0o666);
    const told: [string, number][] = [];
    const database = await createDb({ dataDir: dir, migrate: false, onDataDirModesFixed: (d, n) => told.push([d, n]) });
    await database.close();
    expect(told).toEqual([[dir, 11]]);
    expect(Object.keys(await modes(dir)).sort()).toEqual(["600", "700"]);
    // Nothing to fix the next time: no log line.
    const again: number[] = [];
    await (await createDb({ dataDir: dir, migrate: false, onDataDirModesFixed: (_, n) => again.push(n) })).close();
    expect(again).toEqual([]);
  });
});
