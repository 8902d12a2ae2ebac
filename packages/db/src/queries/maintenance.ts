import { getTableName, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import type { Db } from "../client";
import { lineHealth, probeSchedule, publishedTables } from "../schema/index";

/**
 * Tables that probing rewrites all day: every probe claims and hands back its schedule row and
 * updates its line's health row; every publish rewrites a route's table. Each update leaves the
 * old row version behind until VACUUM reclaims it.
 */
export const REWRITTEN_TABLES: readonly PgTable[] = [probeSchedule, lineHealth, publishedTables];

/**
 * VACUUM (ANALYZE) these tables, one statement each (VACUUM cannot run inside a transaction).
 * PostgreSQL's autovacuum does this by itself; the embedded PGlite is one process with no
 * autovacuum, so there the control plane calls this on a timer, or its tables grow without end
 * and the planner works from statistics of the first minutes.
 */
export async function vacuumTables(db: Db, tables: readonly PgTable[]): Promise<void> {
  for (const table of tables) await db.execute(sql.raw(`vacuum (analyze) "${getTableName(table)}"`));
}
