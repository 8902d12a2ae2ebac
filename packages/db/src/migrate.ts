import { fileURLToPath } from "node:url";
import type { PgliteDatabase } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import type { Database } from "./client";

export const migrationsFolder = fileURLToPath(new URL("../../../drizzle", import.meta.url));

/** Any number: it only has to be the same in every replica. */
const MIGRATION_LOCK = 4_242_017;

export async function migrateDb(database: Database, url?: string): Promise<void> {
  if (database.driver === "pglite") {
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder });
    return;
  }
  // createDb picks PostgreSQL only when it has a url, and passes it here.
  if (!url) throw new Error("migrateDb: a PostgreSQL database needs its url to migrate");
  // Replicas may start together: one connection holds an advisory lock while it migrates.
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await client`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migratePostgres(drizzlePostgres({ client }), { migrationsFolder });
    await client`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await client.end({ timeout: 5 });
  }
}
