import { fileURLToPath } from "node:url";
import type { PgliteDatabase } from "drizzle-orm/pglite";
import { migrate as migratePgliteWith } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgresWith } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import type { Schema } from "./client";

export const migrationsFolder = fileURLToPath(new URL("../../../drizzle", import.meta.url));

/** Any number: it only has to be the same in every replica. */
const MIGRATION_LOCK = 4_242_017;

/** Apply the migrations to an embedded database (one process's: no lock needed). */
export async function migratePglite(db: PgliteDatabase<Schema>): Promise<void> {
  await migratePgliteWith(db, { migrationsFolder });
}

/** Apply the migrations to PostgreSQL at `url`, on a connection of its own. */
export async function migratePostgres(url: string): Promise<void> {
  // Replicas may start together: one connection holds an advisory lock while it migrates.
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await client`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migratePostgresWith(drizzlePostgres({ client }), { migrationsFolder });
    await client`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await client.end({ timeout: 5 });
  }
}
