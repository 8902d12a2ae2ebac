// Reads for a policy replay (docs/replay.md): probe results and events of a time range, streamed in time
// order by keyset pages (never the range in memory), and what stood before the range. Read only.
import { parseFingerprintStep, type RecordedEvent, type ReplayResult, type ScoreComponents } from "@linewatch/core";
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { events, probeResults } from "../schema/index";
import { executeRows, jsonRowsParam } from "./probe-results";

export interface ReplayRange {
  from: Date;
  to: Date;
  /** Only these lines' results; null: every line. */
  lineIds: readonly string[] | null;
}

const lineFilter = (lineIds: readonly string[] | null) =>
  lineIds === null
    ? sql`true`
    : sql`line_id in (select (x->>0)::uuid from jsonb_array_elements(${jsonRowsParam(lineIds.map((id) => [id]))}::jsonb) x)`;

/** How many results the range holds (for progress, and to refuse a range without data). */
export async function countReplayResults(db: Db, range: ReplayRange): Promise<number> {
  const rows = executeRows<{ n: string | number }>(
    await db.execute(sql`select count(*) as n from ${probeResults}
      where started_at >= ${range.from.toISOString()}::timestamptz and started_at < ${range.to.toISOString()}::timestamptz and ${lineFilter(range.lineIds)}`),
  );
  return Number(rows[0]?.n ?? 0);
}

/** When the range's first result started (ms), null when it has none. */
export async function firstReplayResultAt(db: Db, range: ReplayRange): Promise<number | null> {
  const rows = executeRows<{ us: string | null }>(
    await db.execute(sql`select (extract(epoch from min(started_at)) * 1000000)::int8::text as us from ${probeResults}
      where started_at >= ${range.from.toISOString()}::timestamptz and started_at < ${range.to.toISOString()}::timestamptz and ${lineFilter(range.lineIds)}`),
  );
  const us = rows[0]?.us;
  return us === null || us === undefined ? null : Math.floor(Number(us) / 1000);
}

/**
 * The range's results in (started_at, id) order, a page at a time: each page starts after the
 * last row of the one before (keyset), so memory holds one page whatever the range. Components are
 * read only when asked for (re-scoring): parsing them is most of the cost of a row.
 */
export async function* replayResultPages(
  db: Db,
  range: ReplayRange,
  opts: { pageSize?: number; withComponents?: boolean; signal?: AbortSignal } = {},
): AsyncGenerator<ReplayResult[]> {
  const pageSize = opts.pageSize ?? 20_000;
  const components = opts.withComponents ? sql`components::text` : sql`null`;
  let after: { us: string; id: string } | null = null;
  for (;;) {
    opts.signal?.throwIfAborted();
    // The plain bound lets the started_at index start the scan at the cursor; the row comparison breaks ties.
    const at = after === null ? null : sql`(timestamptz 'epoch' + ${after.us}::int8 * interval '1 microsecond')`;
    const cursor: SQL =
      at === null || after === null ? sql`true` : sql`started_at >= ${at} and (started_at, id) > (${at}, ${after.id}::uuid)`;
    type Row = {
      id: string;
      line_id: string;
      sample_id: string;
      /** Microseconds since the epoch, exact (the keyset cursor needs the stored precision). */
      us: string;
      latency_ms: number;
      score: number;
      passed: boolean;
      hard_failure: boolean;
      components: string | null;
      failed_check: boolean;
      content_length: number;
      fingerprint: string | null;
    };
    const rows: Row[] = executeRows<Row>(
      await db.execute(sql`select id, line_id, sample_id, (extract(epoch from started_at) * 1000000)::int8::text as us,
          latency_ms, score, passed, hard_failure, ${components} as components,
          jsonb_path_exists(checks, '$[*] ? (@.verdict == "fail")') as failed_check, content_length, (relay->'fingerprint')::text as fingerprint
        from ${probeResults}
        where started_at >= ${range.from.toISOString()}::timestamptz and started_at < ${range.to.toISOString()}::timestamptz
          and ${lineFilter(range.lineIds)} and ${cursor}
        order by started_at, id
        limit ${pageSize}`),
    );
    if (rows.length === 0) return;
    const last: Row | undefined = rows[rows.length - 1];
    if (last) after = { us: last.us, id: last.id };
    yield rows.map((r) => ({
      id: r.id,
      lineId: r.line_id,
      sampleId: r.sample_id,
      startedAt: Math.floor(Number(r.us) / 1000),
      latencyMs: r.latency_ms,
      score: Number(r.score),
      passed: r.passed,
      hardFailure: r.hard_failure,
      components: r.components === null ? null : (JSON.parse(r.components) as ScoreComponents),
      failedCheck: r.failed_check,
      contentLength: r.content_length,
      fingerprint: r.fingerprint === null ? null : parseFingerprintStep(JSON.parse(r.fingerprint)),
    }));
    if (rows.length < pageSize) return;
  }
}

/** An event as the replay reads it, with its id (the keyset cursor's tie-break). */
export type ReplayEventRow = RecordedEvent & { id: number };

const REPLAY_KINDS = sql`kind in ('state_change', 'weight_change', 'table_published')`;

function toReplayEvent(r: {
  id: number | string;
  ms: number | string;
  kind: string;
  line_id: string | null;
  route_name: string | null;
  reason: string;
  data: string;
}): ReplayEventRow {
  return {
    id: Number(r.id),
    at: Math.round(Number(r.ms)),
    kind: r.kind,
    lineId: r.line_id,
    routeName: r.route_name,
    reason: r.reason,
    data: JSON.parse(r.data) as Record<string, unknown>,
  };
}

/** The range's state changes, weight changes and table publications, in (at, id) order, a page at a time. */
export async function* replayEventPages(
  db: Db,
  range: { from: Date; to: Date },
  opts: { pageSize?: number; signal?: AbortSignal } = {},
): AsyncGenerator<ReplayEventRow[]> {
  const pageSize = opts.pageSize ?? 5_000;
  let after: { at: string; id: number } | null = null;
  for (;;) {
    opts.signal?.throwIfAborted();
    const cursor: SQL =
      after === null ? sql`true` : sql`at >= ${after.at}::timestamptz and (at, id) > (${after.at}::timestamptz, ${after.id})`;
    type Row = Parameters<typeof toReplayEvent>[0] & { at_text: string };
    const rows: Row[] = executeRows<Row>(
      await db.execute(sql`select id, (extract(epoch from at) * 1000)::float8 as ms,
          to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at_text, kind, line_id, route_name, reason, data::text as data
        from ${events}
        where at >= ${range.from.toISOString()}::timestamptz and at < ${range.to.toISOString()}::timestamptz and ${REPLAY_KINDS} and ${cursor}
        order by at, id
        limit ${pageSize}`),
    );
    if (rows.length === 0) return;
    const last: Row | undefined = rows[rows.length - 1];
    if (last) after = { at: last.at_text, id: Number(last.id) };
    yield rows.map(toReplayEvent);
    if (rows.length < pageSize) return;
  }
}

/** The latest state change and weight change of each line, and table publication of each route, before `at`. */
export async function replayEventsBefore(db: Db, at: Date): Promise<ReplayEventRow[]> {
  const rows = executeRows<Parameters<typeof toReplayEvent>[0]>(
    await db.execute(sql`select distinct on (kind, coalesce(line_id::text, ''), coalesce(route_name, ''))
          id, (extract(epoch from at) * 1000)::float8 as ms, kind, line_id, route_name, reason, data::text as data
        from ${events}
        where at < ${at.toISOString()}::timestamptz and ${REPLAY_KINDS}
        order by kind, coalesce(line_id::text, ''), coalesce(route_name, ''), at desc, id desc`),
  );
  return rows.map(toReplayEvent).sort((a, b) => a.at - b.at || a.id - b.id);
}

/** Row counts of the tables a replay must leave alone (tests check a replay writes nothing). */
export async function replayTableCounts(db: Db): Promise<Record<string, number>> {
  const rows = executeRows<{ t: string; n: string | number }>(
    await db.execute(sql`select 'probe_results' as t, count(*) as n from ${probeResults}
      union all select 'events', count(*) from ${events}
      union all select 'published_tables', count(*) from published_tables
      union all select 'line_health', count(*) from line_health`),
  );
  return Object.fromEntries(rows.map((r) => [r.t, Number(r.n)]));
}
