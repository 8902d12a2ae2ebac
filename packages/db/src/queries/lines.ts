import type { AdminState, Line, Protocol, RouteMembership, Tier } from "@linewatch/core";
import { and, asc, eq, inArray, isNull, or, sql } from "drizzle-orm";
import type { Db } from "../client";
import { lines, routeLines } from "../schema/index";
import { executeRows } from "./probe-results";

export type LineRow = typeof lines.$inferSelect;

export interface LineWrite {
  name: string;
  tier: Tier;
  protocol: Protocol;
  baseUrl: string;
  model: string;
  apiKeyEnc: string | null;
  /** Header names → whether each has a value; the values go sealed in headersEnc. */
  headers: Record<string, boolean>;
  headersEnc?: string | null;
  routes: RouteMembership[];
  probeIntervalSec: number;
  timeoutMs: number | null;
  dailyQuota: number | null;
  probeBudgetPct: number;
  maxShare: number | null;
  adminState: AdminState;
}

/** A line as the API shows it: header names with whether each has a value, never the values. */
export type LineView = Omit<Line, "headers"> & { headers: Record<string, { hasValue: boolean }>; updatedAt: string };

export function toLine(row: LineRow, memberships: RouteMembership[]): LineView {
  return {
    id: row.id,
    name: row.name,
    tier: row.tier as Tier,
    protocol: row.protocol as Protocol,
    baseUrl: row.baseUrl,
    model: row.model,
    headers: Object.fromEntries(Object.entries(row.headers).map(([name, v]) => [name, { hasValue: typeof v === "string" ? v !== "" : v }])),
    routes: memberships,
    probeIntervalSec: row.probeIntervalSec,
    timeoutMs: row.timeoutMs,
    dailyQuota: row.dailyQuota,
    probeBudgetPct: row.probeBudgetPct,
    maxShare: row.maxShare,
    adminState: row.adminState as AdminState,
    hasApiKey: row.apiKeyEnc !== null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The memberships of these lines; "all": of every line (no list of ids to send: 10,000 of them cost more than the rows). */
async function membershipsOf(db: Db, lineIds: string[] | "all"): Promise<Map<string, RouteMembership[]>> {
  const byLine = new Map<string, RouteMembership[]>();
  if (lineIds.length === 0) return byLine;
  const rows =
    lineIds === "all"
      ? await db.select().from(routeLines).orderBy(asc(routeLines.routeName))
      : await db.select().from(routeLines).where(inArray(routeLines.lineId, lineIds)).orderBy(asc(routeLines.routeName));
  for (const r of rows) {
    const list = byLine.get(r.lineId) ?? [];
    list.push({ route: r.routeName, weight: r.weight });
    byLine.set(r.lineId, list);
  }
  return byLine;
}

export async function listLineRows(db: Db): Promise<{ row: LineRow; routes: RouteMembership[] }[]> {
  const [rows, members] = await Promise.all([db.select().from(lines).orderBy(asc(lines.name)), membershipsOf(db, "all")]);
  return rows.map((row) => ({ row, routes: members.get(row.id) ?? [] }));
}

/**
 * A line row's version: its xmin, the transaction that wrote this version of the row. Every change
 * of a row writes a new version under the writing transaction's id, so a committed row read again
 * with the same version has the same content (for xmin to come round again, 2^32 transactions must
 * pass between two writes of the row and the second land on the same id).
 */
const rowVersion = sql<string>`${lines}.xmin::text`;

/** A line's row with its version (see listLineVersions) and memberships. */
export interface VersionedLineRow {
  row: LineRow;
  version: string;
  routes: RouteMembership[];
}

/**
 * Every line's id and row version, by name, with every line's memberships: in one statement that
 * reads no row's columns, so a registry cache holding most lines reads 10,000 of them in a few
 * milliseconds and fetches only the rows whose version moved (listVersionedLineRows).
 */
export async function listLineVersions(db: Db): Promise<{ id: string; version: string; routes: RouteMembership[] }[]> {
  const result = await db.execute(sql`
    select
      (select coalesce(string_agg(l.id::text || ' ' || l.xmin::text, ',' order by l.name), '') from ${lines} l) as versions,
      (select coalesce(json_agg(json_build_array(m.line_id, m.route_name, m.weight) order by m.route_name), '[]'::json)::text
        from ${routeLines} m) as memberships`);
  const row = executeRows<{ versions: string; memberships: string }>(result)[0];
  const byLine = new Map<string, RouteMembership[]>();
  for (const [lineId, route, weight] of JSON.parse(row?.memberships ?? "[]") as [string, string, number][]) {
    const list = byLine.get(lineId);
    if (list) list.push({ route, weight });
    else byLine.set(lineId, [{ route, weight }]);
  }
  if (!row?.versions) return [];
  return row.versions.split(",").map((item) => {
    const id = item.slice(0, 36);
    return { id, version: item.slice(37), routes: byLine.get(id) ?? [] };
  });
}

/**
 * Lines with their row versions: every line ("all", as listLineRows); the lines that are members of
 * these routes or have these ids, each with all its memberships (what a registry cache re-reads
 * after a change that named its routes, instead of every line); or only the lines with these ids,
 * without memberships (`only`: what listLineVersions found changed; their memberships came with it).
 */
export async function listVersionedLineRows(
  db: Db,
  which: "all" | { routes: string[]; ids: string[] } | { only: string[] },
): Promise<VersionedLineRow[]> {
  const columns = { row: lines, version: rowVersion };
  if (which === "all") {
    const [rows, members] = await Promise.all([db.select(columns).from(lines).orderBy(asc(lines.name)), membershipsOf(db, "all")]);
    return rows.map((r) => ({ row: r.row, version: r.version, routes: members.get(r.row.id) ?? [] }));
  }
  if ("only" in which) {
    if (which.only.length === 0) return [];
    const rows = await db
      .select(columns)
      .from(lines)
      .where(sql`${lines.id} = any(${`{${which.only.join(",")}}`}::uuid[])`)
      .orderBy(asc(lines.name));
    return rows.map((r) => ({ row: r.row, version: r.version, routes: [] }));
  }
  const onRoutes = db.select({ id: routeLines.lineId }).from(routeLines).where(inArray(routeLines.routeName, which.routes));
  const [rows, memberships] = await Promise.all([
    db
      .select(columns)
      .from(lines)
      .where(or(inArray(lines.id, onRoutes), inArray(lines.id, which.ids)))
      .orderBy(asc(lines.name)),
    db
      .select()
      .from(routeLines)
      .where(or(inArray(routeLines.lineId, onRoutes), inArray(routeLines.lineId, which.ids)))
      .orderBy(asc(routeLines.routeName)),
  ]);
  const byLine = new Map<string, RouteMembership[]>();
  for (const r of memberships) {
    const list = byLine.get(r.lineId);
    if (list) list.push({ route: r.routeName, weight: r.weight });
    else byLine.set(r.lineId, [{ route: r.routeName, weight: r.weight }]);
  }
  return rows.map((r) => ({ row: r.row, version: r.version, routes: byLine.get(r.row.id) ?? [] }));
}

export async function listLines(db: Db) {
  return (await listLineRows(db)).map(({ row, routes }) => toLine(row, routes));
}

export async function getLineRow(db: Db, id: string): Promise<{ row: LineRow; routes: RouteMembership[] } | null> {
  const [row] = await db.select().from(lines).where(eq(lines.id, id));
  if (!row) return null;
  const members = await membershipsOf(db, [id]);
  return { row, routes: members.get(id) ?? [] };
}

export async function getLine(db: Db, id: string) {
  const found = await getLineRow(db, id);
  return found ? toLine(found.row, found.routes) : null;
}

export async function findLineByName(db: Db, name: string) {
  const [row] = await db.select({ id: lines.id }).from(lines).where(eq(lines.name, name));
  return row ? getLine(db, row.id) : null;
}

/** Insert a line and its memberships in one transaction. */
export async function insertLine(db: Db, input: LineWrite) {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(lines)
      .values({ ...input, routes: undefined } as typeof lines.$inferInsert)
      .returning();
    if (!row) throw new Error("insert returned no row");
    if (input.routes.length > 0) {
      await tx.insert(routeLines).values(input.routes.map((m) => ({ routeName: m.route, lineId: row.id, weight: m.weight })));
    }
    return toLine(row, input.routes);
  });
}

/** Update the given fields; `routes`, when present, replaces the memberships. */
export async function updateLine(db: Db, id: string, patch: Partial<LineWrite>, now: Date) {
  return db.transaction(async (tx) => {
    const { routes, ...columns } = patch;
    const [row] = await tx
      .update(lines)
      .set({ ...columns, updatedAt: now })
      .where(eq(lines.id, id))
      .returning();
    if (!row) return null;
    if (routes) {
      await tx.delete(routeLines).where(eq(routeLines.lineId, id));
      if (routes.length > 0) {
        await tx.insert(routeLines).values(routes.map((m) => ({ routeName: m.route, lineId: id, weight: m.weight })));
      }
    }
    const members = await membershipsOf(tx, [id]);
    return toLine(row, members.get(id) ?? []);
  });
}

export async function deleteLine(db: Db, id: string): Promise<boolean> {
  const deleted = await db.delete(lines).where(eq(lines.id, id)).returning({ id: lines.id });
  return deleted.length > 0;
}

/** Swap a line's sealed headers, only while it still holds `expected` (as replaceLineApiKeyEnc). */
export async function replaceLineHeadersEnc(
  db: Db,
  id: string,
  expected: { headers: Record<string, boolean | string>; headersEnc: string | null },
  next: { headers: Record<string, boolean>; headersEnc: string | null },
): Promise<boolean> {
  const unchanged = expected.headersEnc === null ? isNull(lines.headersEnc) : eq(lines.headersEnc, expected.headersEnc);
  const rows = await db
    .update(lines)
    .set(next)
    .where(and(eq(lines.id, id), unchanged, sql`${lines.headers} = ${JSON.stringify(expected.headers)}::jsonb`))
    .returning({ id: lines.id });
  return rows.length > 0;
}

/**
 * Swap a line's sealed API key for one sealed with another secret key, only while it still holds
 * `expected` (a key changed meanwhile through the API wins). Not a user change: updatedAt stays.
 */
export async function replaceLineApiKeyEnc(db: Db, id: string, expected: string, next: string): Promise<boolean> {
  const rows = await db
    .update(lines)
    .set({ apiKeyEnc: next })
    .where(and(eq(lines.id, id), eq(lines.apiKeyEnc, expected)))
    .returning({ id: lines.id });
  return rows.length > 0;
}
