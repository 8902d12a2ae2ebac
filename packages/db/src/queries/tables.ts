import { asc, eq } from "drizzle-orm";
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

export async function lockPublishedTable(tx: Db, route: string): Promise<PublishedTableRow | null> {
  const [row] = await tx.select().from(publishedTables).where(eq(publishedTables.routeName, route)).for("update");
  return row ?? null;
}

export async function upsertPublishedTable(tx: Db, row: PublishedTableRow): Promise<void> {
  await tx
    .insert(publishedTables)
    .values(row)
    .onConflictDoUpdate({ target: publishedTables.routeName, set: { version: row.version, generatedAt: row.generatedAt, mode: row.mode, lines: row.lines } });
}
