import { randomBytes } from "node:crypto";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createDb, type Database } from "@linewatch/db";
import postgres from "postgres";
import { inject } from "vitest";
import type { DatabaseTemplate } from "./database-template";

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
 * (CI runs the suite both ways), otherwise PGlite, a throwaway one per open() or (persistent) one
 * directory that outlives its connections. Each is a copy of the template the run's globalSetup
 * migrated once (test/helpers/database-template.ts), not a fresh initdb and migration.
 */
export async function createTestDatabase(opts: { persistent?: boolean } = {}): Promise<TestDatabase> {
  const template = inject("databaseTemplate") as DatabaseTemplate | undefined;
  if (!template) throw new Error("no database template: run the tests through test/vitest.config.ts or test/vitest.slow.config.ts");
  const name = `${template.prefix}${randomBytes(6).toString("hex")}`;
  if (template.kind === "postgres") {
    const admin = postgres(template.adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name} template ${template.name}`);
    await admin.end();
    const url = new URL(template.adminUrl);
    url.pathname = `/${name}`;
    return {
      kind: "postgres",
      url: url.toString(),
      dataDir: "",
      open: () => createDb({ url: url.toString(), maxConnections: 5, migrate: false }),
      dispose: async () => {
        const a = postgres(template.adminUrl, { max: 1, onnotice: () => {} });
        await a.unsafe(`drop database if exists ${name} with (force)`);
        await a.end();
      },
    };
  }
  const copy = (dir: string) => cpSync(template.dataDir, dir, { recursive: true });
  if (!opts.persistent) {
    // Gone when closed, like an in-memory database: each open() is a copy of its own.
    let n = 0;
    return {
      kind: "pglite",
      url: undefined,
      dataDir: "memory",
      open: async () => {
        const dir = join(template.root, `${name}-${n++}`);
        copy(dir);
        const database = await createDb({ dataDir: dir, migrate: false });
        return {
          ...database,
          close: async () => {
            await database.close();
            rmSync(dir, { recursive: true, force: true });
          },
        };
      },
      dispose: async () => {},
    };
  }
  const dataDir = join(template.root, name);
  copy(dataDir);
  return {
    kind: "pglite",
    url: undefined,
    dataDir,
    open: () => createDb({ dataDir, migrate: false }),
    dispose: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}
