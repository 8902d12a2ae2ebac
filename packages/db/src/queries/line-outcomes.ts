import type { LiveWindow, OutcomeCounts } from "@linewatch/core";
import { and, asc, eq, gte, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "../client";
import { lineOutcomes } from "../schema/index";

export type LineOutcomeInsert = Omit<typeof lineOutcomes.$inferInsert, "id">;

/**
 * Store a router's report window, one row per line, in one statement. Rows whose (router,
 * window, line) exists already are skipped: returns the line ids stored now (empty for a replay).
 */
export async function insertLineOutcomes(db: Db, rows: LineOutcomeInsert[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const stored = await db.insert(lineOutcomes).values(rows).onConflictDoNothing().returning({ lineId: lineOutcomes.lineId });
  return stored.map((r) => r.lineId);
}

/** The columns a LiveWindow is made of. */
const windowColumns = {
  routerId: lineOutcomes.routerId,
  windowStart: lineOutcomes.windowStart,
  windowEnd: lineOutcomes.windowEnd,
  counts: lineOutcomes.counts,
  promptTokens: lineOutcomes.promptTokens,
  completionTokens: lineOutcomes.completionTokens,
  heldBack: lineOutcomes.heldBack,
};

/** A line's windows that ended at or after `since`, oldest first. */
export async function lineOutcomeWindows(db: Db, lineId: string, since: Date): Promise<LiveWindow[]> {
  const rows = await db
    .select(windowColumns)
    .from(lineOutcomes)
    .where(and(eq(lineOutcomes.lineId, lineId), gte(lineOutcomes.windowEnd, since)))
    .orderBy(asc(lineOutcomes.windowEnd));
  return rows.map(toWindow);
}

/** Every line's windows that ended at or after `since` (the dashboard's overview, the metrics). */
export async function outcomeWindowsSince(db: Db, since: Date, lineIds?: string[]): Promise<Map<string, LiveWindow[]>> {
  const where = lineIds
    ? and(gte(lineOutcomes.windowEnd, since), inArray(lineOutcomes.lineId, lineIds))
    : gte(lineOutcomes.windowEnd, since);
  const rows = await db
    .select({ lineId: lineOutcomes.lineId, ...windowColumns })
    .from(lineOutcomes)
    .where(where)
    .orderBy(asc(lineOutcomes.windowEnd));
  const out = new Map<string, LiveWindow[]>();
  for (const r of rows) {
    let list = out.get(r.lineId);
    if (list === undefined) {
      list = [];
      out.set(r.lineId, list);
    }
    list.push(toWindow(r));
  }
  return out;
}

function toWindow(r: {
  routerId: string;
  windowStart: Date;
  windowEnd: Date;
  counts: OutcomeCounts;
  promptTokens: number;
  completionTokens: number;
  heldBack: number;
}): LiveWindow {
  return {
    routerId: r.routerId,
    start: r.windowStart.getTime(),
    end: r.windowEnd.getTime(),
    counts: r.counts,
    promptTokens: Number(r.promptTokens),
    completionTokens: Number(r.completionTokens),
    heldBack: r.heldBack,
  };
}

export async function countLineOutcomes(db: Db): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(lineOutcomes);
  return Number(row?.n ?? 0);
}

/** Retention: delete up to `batch` windows received before `before`; returns how many. */
export async function deleteOldLineOutcomes(db: Db, before: Date, batch: number): Promise<number> {
  const old = db.select({ id: lineOutcomes.id }).from(lineOutcomes).where(lt(lineOutcomes.receivedAt, before)).limit(batch);
  const deleted = await db.delete(lineOutcomes).where(inArray(lineOutcomes.id, old)).returning({ id: lineOutcomes.id });
  return deleted.length;
}
