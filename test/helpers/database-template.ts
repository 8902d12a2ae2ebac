// vitest globalSetup: one migrated database, which every suite's test database copies
// (test-db.ts). A fresh PGlite costs an initdb and the migrations, seconds on this 2-core machine;
// a copy of a migrated data directory costs a fraction of one. The PGlite template is kept in
// node_modules/.cache between runs, under a key of the migrations and the versions that write it.
// On PostgreSQL the template is a database of the run's own (CREATE DATABASE … TEMPLATE), dropped
// at the end with every copy the run left.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createDb, migrationsFolder } from "@linewatch/db";
import postgres from "postgres";
import type { TestProject } from "vitest/node";

export type DatabaseTemplate =
  /** `root` holds the run's copies of the migrated data directory `dataDir`. */
  | { kind: "pglite"; root: string; dataDir: string; prefix: string }
  /** `name` is the migrated template database; copies are named `prefix…`. */
  | { kind: "postgres"; adminUrl: string; name: string; prefix: string };

declare module "vitest" {
  export interface ProvidedContext {
    databaseTemplate: DatabaseTemplate;
  }
}

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const CACHE = join(repoRoot, "node_modules", ".cache", "linewatch-test-db");

export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = randomBytes(4).toString("hex");
  const prefix = `lw_test_${run}_`;
  const adminUrl = process.env.DATABASE_URL;
  if (adminUrl) {
    const name = `lw_template_${run}`;
    const admin = () => postgres(adminUrl, { max: 1, onnotice: () => {} });
    const create = admin();
    await create.unsafe(`create database ${name}`);
    await create.end();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    // A template may have no connection open while it is copied: migrate, then close them all.
    const database = await createDb({ url: url.toString(), maxConnections: 1 });
    await database.close();
    project.provide("databaseTemplate", { kind: "postgres", adminUrl, name, prefix });
    return async () => {
      // Suites that never dispose of their databases leave them to this.
      const drop = admin();
      const left = await drop<{ datname: string }[]>`select datname from pg_database where starts_with(datname, ${prefix})`;
      for (const { datname } of left) await drop.unsafe(`drop database if exists ${datname} with (force)`);
      await drop.unsafe(`drop database if exists ${name} with (force)`);
      await drop.end();
    };
  }
  const dataDir = await pgliteTemplate();
  // In RAM where the machine has it: copies and PGlite's writes go at memory speed.
  const root = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "lw-test-"));
  project.provide("databaseTemplate", { kind: "pglite", root, dataDir, prefix });
  return async () => rmSync(root, { recursive: true, force: true });
}

/** The migrated PGlite data directory for these migrations, built once and kept. */
async function pgliteTemplate(): Promise<string> {
  const hash = createHash("sha256");
  for (const pkg of ["@electric-sql/pglite", "drizzle-orm"]) hash.update(readFileSync(join(repoRoot, "node_modules", pkg, "package.json")));
  for (const file of readdirSync(migrationsFolder, { recursive: true, withFileTypes: true }).filter((f) => f.isFile()))
    hash.update(`${file.name}\n`).update(readFileSync(join(file.parentPath, file.name)));
  const key = hash.digest("hex").slice(0, 16);
  const dir = join(CACHE, `pglite-${key}`);
  if (existsSync(dir)) return dir;
  mkdirSync(CACHE, { recursive: true });
  const building = mkdtempSync(join(CACHE, "building-"));
  const database = await createDb({ dataDir: building });
  await database.close();
  try {
    renameSync(building, dir);
  } catch (error) {
    // Another run built the same template at the same time: keep theirs.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(dir)) throw error;
  }
  for (const old of readdirSync(CACHE))
    if (old.startsWith("pglite-") && old !== `pglite-${key}`) rmSync(join(CACHE, old), { recursive: true, force: true });
  return dir;
}
