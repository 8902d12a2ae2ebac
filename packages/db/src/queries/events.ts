import { and, desc, eq, gt, gte, isNotNull, lt, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { events } from "../schema/index";
import { jsonRowsParam } from "./probe-results";

export type EventRow = typeof events.$inferSelect;
export type EventInsert = Omit<typeof events.$inferInsert, "id">;

/** Events as one JSON parameter, for `jsonb_to_recordset(...) as e(at timestamptz, kind text, line_id uuid, route_name text, reason text, data jsonb, dedupe_key text)`. */
export function eventRowsParam(rows: readonly EventInsert[]): string {
  return jsonRowsParam(
    rows.map((e) => ({
      at: e.at.toISOString(),
      kind: e.kind,
      line_id: e.lineId ?? null,
      route_name: e.routeName ?? null,
      reason: e.reason,
      data: e.data,
      dedupe_key: e.dedupeKey ?? null,
    })),
  );
}

/** Record events; one whose dedupe key exists already is skipped (replays after a restart record nothing twice). */
export async function insertEvents(db: Db, rows: EventInsert[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insert(events).values(rows).onConflictDoNothing();
}

export interface EventFilter {
  lineId?: string;
  route?: string;
  kind?: string;
  since?: Date;
  /** Cursor: events with an id below this (pages go back in time). */
  before?: number;
  /** Cursor for followers: events with an id above this, oldest first. */
  after?: number;
  limit: number;
}

export async function listEvents(db: Db, f: EventFilter): Promise<EventRow[]> {
  const where: SQL[] = [];
  if (f.lineId) where.push(eq(events.lineId, f.lineId));
  if (f.route) where.push(eq(events.routeName, f.route));
  if (f.kind) where.push(eq(events.kind, f.kind));
  if (f.since) where.push(gte(events.at, f.since));
  if (f.before !== undefined) where.push(lt(events.id, f.before));
  if (f.after !== undefined) where.push(gt(events.id, f.after));
  const q = db
    .select()
    .from(events)
    .where(where.length ? and(...where) : undefined)
    .limit(f.limit);
  return f.after !== undefined ? q.orderBy(events.id) : q.orderBy(desc(events.id));
}

/** How many events of a kind each line has had (e.g. trend alerts, for /metrics). Served by the (kind, id) index. */
export async function countEventsByLine(db: Db, kind: string): Promise<{ lineId: string; count: number }[]> {
  const rows = await db
    .select({ lineId: events.lineId, count: sql<number>`count(*)::int` })
    .from(events)
    .where(and(eq(events.kind, kind), isNotNull(events.lineId)))
    .groupBy(events.lineId);
  return rows.flatMap((r) => (r.lineId ? [{ lineId: r.lineId, count: Number(r.count) }] : []));
}
