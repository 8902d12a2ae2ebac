import { asc, eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { publishedTables } from "../schema/index";

export type PublishedTableRow = typeof publishedTables.$inferSelect;

export async function listPublishedTables(db: Db): Promise<PublishedTableRow[]> {
  return db.select().from(publishedTables).orderBy(asc(publishedTables.routeName));
}

export async function getPublishedTable(db: Db, route: string): Promise<PublishedTableRow | null> {
  const [row] = await db.select().from(publishedTables).where(eq(publishedTables.routeName, route));
  return row ?? null;
}

/** Serialise publishers of one route for the rest of the transaction (works before its first row exists). */
export async function lockRoute(tx: Db, route: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`linewatch-table:${route}`}))`);
}

export async function upsertPublishedTable(tx: Db, row: PublishedTableRow): Promise<void> {
  await tx
    .insert(publishedTables)
    .values(row)
    .onConflictDoUpdate({
      target: publishedTables.routeName,
      set: { version: row.version, generatedAt: row.generatedAt, mode: row.mode, lines: row.lines },
    });
}
