import { randomBytes } from "node:crypto";
import { createDb, type Database } from "@linewatch/db";
import postgres from "postgres";

export interface TestDatabase {
  /** Open (another) connection to the same database, e.g. to simulate a restart. */
  open(): Promise<Database>;
  /** Drop everything this test database holds. */
  dispose(): Promise<void>;
  kind: "pglite" | "postgres";
  url: string | undefined;
  dataDir: string;
}

/**
 * A fresh database with the real migrations: a new PostgreSQL database when DATABASE_URL is set
 * (CI runs the suite both ways), otherwise PGlite, in memory or (persistent) in a directory of its own.
 */
export async function createTestDatabase(opts: { persistent?: boolean } = {}): Promise<TestDatabase> {
  const base = process.env.DATABASE_URL;
  const name = `lw_test_${randomBytes(6).toString("hex")}`;
  if (base) {
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    const url = new URL(base);
    url.pathname = `/${name}`;
    return {
      kind: "postgres",
      url: url.toString(),
      dataDir: "",
      open: () => createDb({ url: url.toString(), maxConnections: 5 }),
      dispose: async () => {
        const a = postgres(base, { max: 1, onnotice: () => {} });
        await a.unsafe(`drop database if exists ${name} with (force)`);
        await a.end();
      },
    };
  }
  if (!opts.persistent) {
    // In memory: fast, but gone when closed; suites that restart ask for `persistent`.
    return { kind: "pglite", url: undefined, dataDir: "memory", open: () => createDb({ dataDir: "memory" }), dispose: async () => {} };
  }
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dataDir = mkdtempSync(join(tmpdir(), "lw-test-"));
  return {
    kind: "pglite",
    url: undefined,
    dataDir,
    open: () => createDb({ dataDir }),
    dispose: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}
