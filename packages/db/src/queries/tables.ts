import { type PublishedLine, type PublishedTable, parsePublishedLines, parseTableMode } from "@linewatch/core";
import { sql } from "drizzle-orm";
import type { Db } from "../client";
import { events, publishedTables } from "../schema/index";
import { type EventInsert, eventRowsParam } from "./events";
import { executeRows, jsonRowsParam } from "./probe-results";

/** A stored table as the program reads it: `table` null when its content is not in the shape this version writes. */
export interface StoredTable {
  route: string;
  version: number;
  table: PublishedTable<PublishedLine> | null;
}

interface RawTable {
  route: string;
  version: number;
  generatedAt: number;
  mode: unknown;
  lines: unknown;
}

// Rows come back as one JSON text: 100 tables of 100 lines each parse in one JSON.parse, not through
// the driver's per-row, per-column decoding.
const selectTables = (where: ReturnType<typeof sql>) => sql`
  select coalesce(json_agg(json_build_object(
    'route', p.route_name, 'version', p.version, 'generatedAt', (extract(epoch from p.generated_at) * 1000)::float8,
    'mode', p.mode, 'lines', p.lines) order by p.route_name), '[]'::json)::text as rows
  from ${publishedTables} p ${where}`;

function parseStored(raw: RawTable): StoredTable {
  const mode = parseTableMode(raw.mode);
  const lines = parsePublishedLines(raw.lines);
  const table =
    mode === null || lines === null ? null : { route: raw.route, version: raw.version, generatedAt: raw.generatedAt, mode, lines };
  return { route: raw.route, version: raw.version, table };
}

async function readTables(db: Db, where: ReturnType<typeof sql>): Promise<StoredTable[]> {
  const result = await db.execute(selectTables(where));
  return (JSON.parse(executeRows<{ rows: string }>(result)[0]?.rows ?? "[]") as RawTable[]).map(parseStored);
}

/** Every stored table, by route name. */
export function listPublishedTables(db: Db): Promise<StoredTable[]> {
  return readTables(db, sql``);
}

/** The stored tables of these routes whose version is above the one given (what a replica does not hold yet). */
export function publishedTablesNewerThan(db: Db, known: { route: string; version: number }[]): Promise<StoredTable[]> {
  if (known.length === 0) return Promise.resolve([]);
  return readTables(
    db,
    sql`join jsonb_to_recordset(${jsonRowsParam(known)}::jsonb) as k(route text, version bigint)
      on k.route = p.route_name and p.version > k.version`,
  );
}

/** The stored version of each of these routes that has one. */
export async function publishedVersions(db: Db, routes: string[]): Promise<Map<string, number>> {
  if (routes.length === 0) return new Map();
  const result = await db.execute(sql`
    select coalesce(json_object_agg(route_name, version), '{}'::json)::text as versions from ${publishedTables}
    where route_name in (select value from jsonb_array_elements_text(${JSON.stringify(routes)}::jsonb))`);
  const versions = JSON.parse(executeRows<{ versions: string }>(result)[0]?.versions ?? "{}") as Record<string, number>;
  return new Map(Object.entries(versions));
}

/** Whether the server can compress values with lz4 (PostgreSQL 14+ built with it; PGlite is not). */
export async function canCompressLz4(db: Db): Promise<boolean> {
  const result = await db.execute(
    sql`select coalesce(bool_or(enumvals @> array['lz4']), false) as lz4 from pg_settings where name = 'default_toast_compression'`,
  );
  return executeRows<{ lz4: boolean }>(result)[0]?.lz4 === true;
}

/**
 * Serialise publishers of these routes for the rest of the transaction (works before a route's first
 * row exists). Taken in name order, so two publishers of overlapping route sets cannot deadlock.
 */
export async function lockRoutes(tx: Db, routes: string[]): Promise<void> {
  if (routes.length === 0) return;
  const ordered = [...new Set(routes)].sort();
  await tx.execute(sql`
    select count(pg_advisory_xact_lock(hashtext('linewatch-table:' || r.name)))
    from jsonb_array_elements_text(${JSON.stringify(ordered)}::jsonb) as r(name)`);
}

/**
 * A line as a table row stores it: without `lineId`, the same as `id` (a sixth of the bytes every
 * publish sends, parses and compresses). parsePublishedLines reads both shapes: rows written before,
 * and replicas of the version before read this one's rows by `id`.
 */
export function storedLine(l: PublishedLine): Omit<PublishedLine, "lineId"> {
  return {
    id: l.id,
    weight: l.weight,
    name: l.name,
    tier: l.tier,
    state: l.state,
    protocol: l.protocol,
    baseUrl: l.baseUrl,
    model: l.model,
    credentials: l.credentials,
  };
}

type StoredLine = ReturnType<typeof storedLine>;

/**
 * What changed in each line from `previous` to `next` (the stored fields whose values differ, `{}`
 * for a line that did not), when both hold the same lines in the same order; null otherwise (then
 * the whole table is written). Every stored field is a string or a number, so `||` on the server
 * (a shallow merge) turns the stored line into the new one exactly.
 */
export function linePatches(previous: PublishedTable<PublishedLine>, next: PublishedTable<PublishedLine>): Partial<StoredLine>[] | null {
  if (previous.lines.length !== next.lines.length || next.lines.length === 0) return null;
  const patches: Partial<StoredLine>[] = [];
  for (let i = 0; i < next.lines.length; i++) {
    const before = storedLine(previous.lines[i] as PublishedLine);
    const after = storedLine(next.lines[i] as PublishedLine);
    if (before.id !== after.id) return null;
    const patch: Record<string, unknown> = {};
    for (const key of Object.keys(after) as (keyof StoredLine)[]) {
      const value = after[key];
      if (typeof value !== "string" && typeof value !== "number") return null;
      if (before[key] !== value) patch[key] = value;
    }
    patches.push(patch as Partial<StoredLine>);
  }
  return patches;
}

/**
 * Store new versions of tables with their events, and announce each route on `channel`, in one
 * statement (the announcements go out when the transaction commits).
 *
 * `previous`: for a route whose stored row is known to hold this table (its version read under the
 * route's lock, and the row this replica serves), only what changed in each line is sent and the
 * server patches the stored lines (a tenth of the bytes when every weight changed); the statement
 * checks the stored version and fails rather than patch a row that is not the one meant.
 */
export async function writePublishedTables(
  tx: Db,
  tables: PublishedTable<PublishedLine>[],
  eventsToRecord: EventInsert[],
  channel: string,
  opts: { lz4?: boolean; previous?: ReadonlyMap<string, PublishedTable<PublishedLine>> } = {},
): Promise<void> {
  if (tables.length === 0) return;
  // A table of 100 lines is ~25 kB of JSON, compressed into TOAST: pglz took most of the statement's
  // server time for 100 tables (~60 ms), lz4 a third of it. Only for this transaction's values; rows
  // of either compression read the same.
  if (opts.lz4) await tx.execute(sql`set local default_toast_compression = 'lz4'`);
  const whole: object[] = [];
  const patched: object[] = [];
  for (const t of tables) {
    const head = { route_name: t.route, version: t.version, generated_at: new Date(t.generatedAt).toISOString(), mode: t.mode };
    const previous = opts.previous?.get(t.route);
    const patches = previous && previous.version < t.version ? linePatches(previous, t) : null;
    if (previous && patches) patched.push({ ...head, previous_version: previous.version, patches });
    else whole.push({ ...head, lines: t.lines.map(storedLine) });
  }
  const eventRows = eventRowsParam(eventsToRecord);
  const result = await tx.execute(sql`
    with up as (
      insert into ${publishedTables} (route_name, version, generated_at, mode, lines)
      select t.route_name, t.version, t.generated_at, t.mode, t.lines
      from jsonb_to_recordset(${jsonRowsParam(whole)}::jsonb) as t(route_name text, version bigint, generated_at timestamptz, mode text, lines jsonb)
      on conflict (route_name) do update
        set version = excluded.version, generated_at = excluded.generated_at, mode = excluded.mode, lines = excluded.lines
      returning route_name),
    pt as (
      update ${publishedTables} p
      set version = t.version, generated_at = t.generated_at, mode = t.mode,
        lines = (select coalesce(jsonb_agg(e.line || (t.patches -> (e.n::int - 1)) order by e.n), '[]'::jsonb)
                 from jsonb_array_elements(p.lines) with ordinality as e(line, n))
      from jsonb_to_recordset(${jsonRowsParam(patched)}::jsonb)
        as t(route_name text, version bigint, previous_version bigint, generated_at timestamptz, mode text, patches jsonb)
      where p.route_name = t.route_name and p.version = t.previous_version
        and jsonb_array_length(p.lines) = jsonb_array_length(t.patches)
      returning p.route_name),
    ev as (
      insert into ${events} (at, kind, line_id, route_name, reason, data, dedupe_key)
      select e.at, e.kind, e.line_id, e.route_name, e.reason, e.data, e.dedupe_key
      from jsonb_to_recordset(${eventRows}::jsonb) as e(at timestamptz, kind text, line_id uuid, route_name text, reason text, data jsonb, dedupe_key text)
      on conflict do nothing)
    select count(pg_notify(${channel}, w.route_name))::int as written from (select route_name from up union all select route_name from pt) w`);
  const written = executeRows<{ written: number }>(result)[0]?.written;
  // A patch that found another version stored (or another number of lines) wrote nothing: the
  // transaction must not commit as if it had published.
  if (written !== tables.length)
    throw new Error(`published ${written} of ${tables.length} tables: a stored table was not the version patched`);
}
