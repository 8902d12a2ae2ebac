import { type Health, parseHealth } from "@linewatch/core";
import { and, eq, inArray, isNotNull, lte, sql } from "drizzle-orm";
import type { Db } from "../client";
import { events, lineHealth, probeResults, samples } from "../schema/index";
import { type EventInsert, eventRowsParam } from "./events";
import { executeRows, jsonRowsParam } from "./probe-results";

/** A health row as the program reads it: `health` parsed (null when the stored record cannot be read at all). */
export interface LineHealthRow extends Omit<typeof lineHealth.$inferSelect, "health"> {
  health: Health | null;
}

const parsed = (row: typeof lineHealth.$inferSelect): LineHealthRow => ({ ...row, health: parseHealth(row.health) });

/** The health row of a line, locked for update inside a transaction. */
export async function lockLineHealth(tx: Db, lineId: string): Promise<LineHealthRow | null> {
  const [row] = await tx.select().from(lineHealth).where(eq(lineHealth.lineId, lineId)).for("update");
  return row ? parsed(row) : null;
}

export async function getLineHealth(db: Db, lineId: string): Promise<LineHealthRow | null> {
  const [row] = await db.select().from(lineHealth).where(eq(lineHealth.lineId, lineId));
  return row ? parsed(row) : null;
}

export async function listLineHealth(db: Db): Promise<LineHealthRow[]> {
  return (await db.select().from(lineHealth)).map(parsed);
}

export async function healthOfLines(db: Db, lineIds: string[]): Promise<LineHealthRow[]> {
  if (lineIds.length === 0) return [];
  return (await db.select().from(lineHealth).where(inArray(lineHealth.lineId, lineIds))).map(parsed);
}

/** Create the rows that are missing (concurrent creators: one wins, nobody fails). */
export async function ensureLinesHealth(db: Db, rows: { lineId: string; health: Health; state: string; now: Date }[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insert(lineHealth)
    .values(rows.map((r) => ({ lineId: r.lineId, health: r.health, state: r.state, revision: 0, updatedAt: r.now })))
    .onConflictDoNothing();
}

export interface LineHealthWrite {
  health: Health;
  state: string;
  score: number | null;
  revision: number;
  tickAt: Date | null;
  updatedAt: Date;
}

/** A line's health as a batch of probe results finds it, with what its line score needs. */
export interface HealthForProbes {
  lineId: string;
  health: Health | null;
  revision: number;
  /** Its results in [since, until] per sample: how many, their total score, the sample's weight. */
  sums: { sampleId: string; weight: number; count: number; scoreSum: number }[];
}

/**
 * Many lines' health rows with their line-score inputs, in one statement and without locks: the
 * write that follows (writeHealthIfUnchanged) only lands where the revision is still the one read.
 */
export async function readHealthForProbes(db: Db, lineIds: string[], since: Date, until: Date): Promise<HealthForProbes[]> {
  if (lineIds.length === 0) return [];
  const result = await db.execute(sql`
    select coalesce(json_agg(json_build_object(
      'lineId', h.line_id, 'health', h.health, 'revision', h.revision,
      'sums', (
        select coalesce(json_agg(json_build_object('sampleId', r.sample_id, 'weight', s.weight, 'count', r.n, 'scoreSum', r.total)), '[]'::json)
        from (
          select sample_id, count(*)::int as n, sum(score::numeric)::float8 as total from ${probeResults}
          where line_id = h.line_id and started_at >= ${since.toISOString()}::timestamptz and started_at <= ${until.toISOString()}::timestamptz
          group by sample_id) r
        join ${samples} s on s.id = r.sample_id))), '[]'::json)::text as rows
    from ${lineHealth} h
    where h.line_id in (select value::uuid from jsonb_array_elements_text(${JSON.stringify(lineIds)}::jsonb))`);
  const rows = JSON.parse(executeRows<{ rows: string }>(result)[0]?.rows ?? "[]") as (Omit<HealthForProbes, "health"> & {
    health: unknown;
  })[];
  return rows.map((r) => ({ ...r, health: parseHealth(r.health) }));
}

/**
 * Write many lines' health with their events in one statement, each line only if its revision is
 * still `expectedRevision` (compare-and-set: a concurrent writer, e.g. a tick under its row lock,
 * wins and the caller reads again). Returns the lines written; a line's events are recorded only
 * if its health was.
 */
export async function writeHealthIfUnchanged(
  db: Db,
  rows: (LineHealthWrite & { lineId: string; expectedRevision: number })[],
  eventsToRecord: EventInsert[],
): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const health = jsonRowsParam(
    rows.map((r) => ({
      line_id: r.lineId,
      expected: r.expectedRevision,
      health: r.health,
      state: r.state,
      score: r.score,
      revision: r.revision,
      tick_at: r.tickAt === null ? null : r.tickAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    })),
  );
  const eventRows = eventRowsParam(eventsToRecord);
  const result = await db.execute(sql`
    with upd as (
      update ${lineHealth} as h
      set health = v.health, state = v.state, score = v.score, revision = v.revision, tick_at = v.tick_at, updated_at = v.updated_at
      from jsonb_to_recordset(${health}::jsonb) as v(line_id uuid, expected integer, health jsonb, state text, score real, revision integer, tick_at timestamptz, updated_at timestamptz)
      where h.line_id = v.line_id and h.revision = v.expected
      returning h.line_id),
    ev as (
      insert into ${events} (at, kind, line_id, route_name, reason, data, dedupe_key)
      select e.at, e.kind, e.line_id, e.route_name, e.reason, e.data, e.dedupe_key
      from jsonb_to_recordset(${eventRows}::jsonb) as e(at timestamptz, kind text, line_id uuid, route_name text, reason text, data jsonb, dedupe_key text)
      where e.line_id in (select line_id from upd)
      on conflict do nothing)
    select coalesce(json_agg(line_id), '[]'::json)::text as ids from upd`);
  return new Set(JSON.parse(executeRows<{ ids: string }>(result)[0]?.ids ?? "[]") as string[]);
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

/** A line's health row whose revision differs from the one the caller holds. */
export interface ChangedHealth {
  lineId: string;
  revision: number;
  health: Health | null;
}

/**
 * The health rows of these lines whose revision differs from the one the caller holds (null: none
 * held); the others are not sent. Every health write bumps the revision (writeHealthIfUnchanged's
 * compare-and-set relies on it), so a caller that keeps parsed health reads 10,000 unchanged lines in
 * one statement that answers nothing. A line without a row is absent.
 */
export async function healthChangedSince(db: Db, held: { lineIds: string[]; revisions: (number | null)[] }): Promise<ChangedHealth[]> {
  if (held.lineIds.length === 0) return [];
  // Two array literals: far cheaper to send and parse than 10,000 JSON objects.
  const ids = `{${held.lineIds.join(",")}}`;
  const revisions = `{${held.revisions.map((r) => (r === null ? "NULL" : String(r))).join(",")}}`;
  const result = await db.execute(sql`
    select coalesce(json_agg(json_build_array(h.line_id, h.revision, h.health)), '[]'::json)::text as rows
    from unnest(${ids}::uuid[], ${revisions}::integer[]) as k(line_id, revision)
    join ${lineHealth} h on h.line_id = k.line_id
    where k.revision is distinct from h.revision`);
  const rows = JSON.parse(executeRows<{ rows: string }>(result)[0]?.rows ?? "[]") as [string, number, unknown][];
  return rows.map(([lineId, revision, health]) => ({ lineId, revision, health: parseHealth(health) }));
}
