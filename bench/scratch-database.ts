// A database a benchmark makes for itself and drops at its end: a new PostgreSQL database next to
// `pgBase`'s, or a PGlite data directory in the temporary folder. Shared by the benchmarks that
// need one (control-plane-scale, replay).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

export type ScratchDatabase =
  | { kind: "postgres"; url: string; drop(): Promise<void> }
  | { kind: "pglite"; dataDir: string; drop(): Promise<void> };

export async function scratchDatabase(opts: { pgBase: string | null; prefix: string }): Promise<ScratchDatabase> {
  if (opts.pgBase !== null) {
    const base = opts.pgBase;
    const name = `${opts.prefix}_${randomBytes(5).toString("hex")}`;
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    const url = new URL(base);
    url.pathname = `/${name}`;
    return {
      kind: "postgres",
      url: url.toString(),
      drop: async () => {
        const a = postgres(base, { max: 1, onnotice: () => {} });
        await a.unsafe(`drop database if exists ${name} with (force)`);
        await a.end();
      },
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), `${opts.prefix.replaceAll("_", "-")}-`));
  return { kind: "pglite", dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}
