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

/**
 * Store new versions of tables with their events, and announce each route on `channel`, in one
 * statement (the announcements go out when the transaction commits).
 */
export async function writePublishedTables(
  tx: Db,
  tables: PublishedTable<PublishedLine>[],
  eventsToRecord: EventInsert[],
  channel: string,
  opts: { lz4?: boolean } = {},
): Promise<void> {
  if (tables.length === 0) return;
  // A table of 100 lines is ~25 kB of JSON, compressed into TOAST: pglz took most of the statement's
  // server time for 100 tables (~60 ms), lz4 a third of it. Only for this transaction's values; rows
  // of either compression read the same.
  if (opts.lz4) await tx.execute(sql`set local default_toast_compression = 'lz4'`);
  const rows = jsonRowsParam(
    tables.map((t) => ({
      route_name: t.route,
      version: t.version,
      generated_at: new Date(t.generatedAt).toISOString(),
      mode: t.mode,
      lines: t.lines.map(storedLine),
    })),
  );
  const eventRows = eventRowsParam(eventsToRecord);
  await tx.execute(sql`
    with up as (
      insert into ${publishedTables} (route_name, version, generated_at, mode, lines)
      select t.route_name, t.version, t.generated_at, t.mode, t.lines
      from jsonb_to_recordset(${rows}::jsonb) as t(route_name text, version bigint, generated_at timestamptz, mode text, lines jsonb)
      on conflict (route_name) do update
        set version = excluded.version, generated_at = excluded.generated_at, mode = excluded.mode, lines = excluded.lines
      returning route_name),
    ev as (
      insert into ${events} (at, kind, line_id, route_name, reason, data, dedupe_key)
      select e.at, e.kind, e.line_id, e.route_name, e.reason, e.data, e.dedupe_key
      from jsonb_to_recordset(${eventRows}::jsonb) as e(at timestamptz, kind text, line_id uuid, route_name text, reason text, data jsonb, dedupe_key text)
      on conflict do nothing)
    select count(pg_notify(${channel}, route_name)) from up`);
}
