import { and, eq, inArray, isNotNull, lte } from "drizzle-orm";
import type { Db } from "../client";
import { lineHealth } from "../schema/index";

export type LineHealthRow = typeof lineHealth.$inferSelect;

/** The health row of a line, locked for update inside a transaction. */
export async function lockLineHealth(tx: Db, lineId: string): Promise<LineHealthRow | null> {
  const [row] = await tx.select().from(lineHealth).where(eq(lineHealth.lineId, lineId)).for("update");
  return row ?? null;
}

export async function getLineHealth(db: Db, lineId: string): Promise<LineHealthRow | null> {
  const [row] = await db.select().from(lineHealth).where(eq(lineHealth.lineId, lineId));
  return row ?? null;
}

export async function listLineHealth(db: Db): Promise<LineHealthRow[]> {
  return db.select().from(lineHealth);
}

export async function healthOfLines(db: Db, lineIds: string[]): Promise<LineHealthRow[]> {
  if (lineIds.length === 0) return [];
  return db.select().from(lineHealth).where(inArray(lineHealth.lineId, lineIds));
}

/** Create the row if missing (concurrent creators: one wins, nobody fails). */
export async function ensureLineHealth(db: Db, lineId: string, health: Record<string, unknown>, state: string, now: Date): Promise<void> {
  await db.insert(lineHealth).values({ lineId, health, state, revision: 0, updatedAt: now }).onConflictDoNothing();
}

export async function writeLineHealth(
  tx: Db,
  lineId: string,
  values: { health: Record<string, unknown>; state: string; score: number | null; revision: number; tickAt: Date | null; updatedAt: Date },
): Promise<void> {
  await tx.update(lineHealth).set(values).where(eq(lineHealth.lineId, lineId));
}

/** Lines whose health time alone changes by now. */
export async function dueHealthTicks(db: Db, now: Date, limit: number): Promise<string[]> {
  const rows = await db
    .select({ lineId: lineHealth.lineId })
    .from(lineHealth)
    .where(and(isNotNull(lineHealth.tickAt), lte(lineHealth.tickAt, now)))
    .orderBy(lineHealth.tickAt)
    .limit(limit);
  return rows.map((r) => r.lineId);
}

