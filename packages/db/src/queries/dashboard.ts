// Read-only aggregates for the operator dashboard: summed in SQL so 200 lines × hours of probes
// come back as a few thousand numbers, not as raw rows.
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";

/** Both drivers' execute(): postgres.js gives an array, PGlite `{rows}`. */
async function rowsOf<T>(db: Db, query: SQL): Promise<T[]> {
  const result = await db.execute(query);
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}

export interface LineActivity {
  lineId: string;
  /** The latest probe of the line (any time), null if it was never probed. */
  last: { at: number; passed: boolean; score: number; status: number | null; errorClass: string | null; sample: string } | null;
}

/**
 * Per line: its latest probe (its score is the stored line score, not worked out here). The lateral
 * join walks the (line_id, started_at) index, so the cost grows with the number of lines, not of results.
 */
export async function lineActivity(db: Db): Promise<LineActivity[]> {
  const rows = await rowsOf<{
    line_id: string;
    last_at: number | null;
    last_passed: boolean | null;
    last_score: number | null;
    last_status: number | null;
    last_error: string | null;
    last_sample: string | null;
  }>(
    db,
    sql`
    select l.id as line_id,
      (extract(epoch from last.started_at) * 1000)::float8 as last_at,
      last.passed as last_passed, last.score::float8 as last_score, last.status as last_status,
      last.error_class as last_error, last.sample_name as last_sample
    from lines l
    left join lateral (
      select p.started_at, p.passed, p.score, p.status, p.error_class, s.name as sample_name
      from probe_results p join samples s on s.id = p.sample_id
      where p.line_id = l.id order by p.started_at desc limit 1
    ) last on true`,
  );
  return rows.map((r) => ({
    lineId: r.line_id,
    last:
      r.last_at === null
        ? null
        : {
            at: Number(r.last_at),
            passed: !!r.last_passed,
            score: Number(r.last_score),
            status: r.last_status === null ? null : Number(r.last_status),
            errorClass: r.last_error,
            sample: r.last_sample ?? "",
          },
  }));
}

export interface LineBucket {
  lineId: string;
  /** Start of the bucket, ms since epoch (a multiple of bucketMs). */
  at: number;
  sampleId: string;
  probes: number;
  /** The sum of the probes' scores: the line's score over a bucket is core's rule (summedLineScore), not worked out here. */
  scoreSum: number;
  /** The sum of the fields component (field completeness, 0–1). */
  fieldsSum: number;
}

/** `date_bin` keeps the bucket arithmetic in timestamps (epoch arithmetic is numeric, and slow). */
const binned = (column: SQL, bucketMs: number) =>
  sql`date_bin(${bucketMs}::int8 * interval '1 millisecond', ${column}, timestamptz '1970-01-01 00:00:00+00')`;

/**
 * Probe outcomes per line, time bucket and sample since `since` (a bucket boundary, so every bucket is
 * whole). The results table alone: joined with the samples (for their weights) it took 1.6× as long.
 */
export async function lineBuckets(db: Db, since: Date, bucketMs: number): Promise<LineBucket[]> {
  const rows = await rowsOf<{ line_id: string; at: number; sample_id: string; probes: number; score_sum: number; fields_sum: number }>(
    db,
    sql`
    select line_id, (extract(epoch from b) * 1000)::float8 as at, sample_id, probes, score_sum, fields_sum from (
      select line_id, ${binned(sql`started_at`, bucketMs)} as b, sample_id,
        count(*)::int as probes,
        sum(score)::float8 as score_sum,
        sum(coalesce((components ->> 'fields')::float8, 0))::float8 as fields_sum
      from probe_results
      where started_at >= ${since.toISOString()}::timestamptz
      group by 1, 2, 3
    ) g`,
  );
  return rows.map((r) => ({
    lineId: r.line_id,
    at: Number(r.at),
    sampleId: r.sample_id,
    probes: Number(r.probes),
    scoreSum: Number(r.score_sum),
    fieldsSum: Number(r.fields_sum),
  }));
}

/** Content-length bins: bin 0 holds empty answers; bins 1..LENGTH_BINS split [1, 10^LENGTH_DECADES) evenly on a log scale; the last bin holds longer. */
export const LENGTH_DECADES = 5;
export const LENGTH_BINS = 20;

export interface LengthBin {
  lineId: string;
  /** Start of the time bucket, ms since epoch. */
  at: number;
  bin: number;
  count: number;
}

/** How long the answers of each line were, per time bucket since `since` (hard failures, which carry no answer, left out). */
export async function contentLengthBins(db: Db, since: Date, bucketMs: number): Promise<LengthBin[]> {
  const rows = await rowsOf<{ line_id: string; at: number; bin: number; count: number }>(
    db,
    sql`
    select line_id, (extract(epoch from b) * 1000)::float8 as at, bin, count from (
      select line_id, ${binned(sql`started_at`, bucketMs)} as b,
        (case when content_length <= 0 then 0
              else width_bucket(log(content_length::float8), 0::float8, ${LENGTH_DECADES}::float8, ${LENGTH_BINS}::int) end)::int as bin,
        count(*)::int as count
      from probe_results
      where started_at >= ${since.toISOString()}::timestamptz and not hard_failure
      group by 1, 2, 3
    ) g`,
  );
  return rows.map((r) => ({ lineId: r.line_id, at: Number(r.at), bin: Number(r.bin), count: Number(r.count) }));
}

export interface ScorePoint {
  at: number;
  sampleId: string;
  score: number;
  passed: boolean;
}

/** A line's probe scores since `since`, oldest first, at most `limit` (the newest ones). */
export async function lineScorePoints(db: Db, lineId: string, since: Date, limit: number): Promise<ScorePoint[]> {
  const rows = await rowsOf<{ at: number; sample_id: string; score: number; passed: boolean }>(
    db,
    sql`
    select * from (
      select (extract(epoch from started_at) * 1000)::float8 as at, sample_id, score::float8 as score, passed
      from probe_results
      where line_id = ${lineId}::uuid and started_at >= ${since.toISOString()}::timestamptz
      order by started_at desc limit ${limit}
    ) recent order by at`,
  );
  return rows.map((r) => ({ at: Number(r.at), sampleId: r.sample_id, score: Number(r.score), passed: !!r.passed }));
}

/**
 * A cheap value that changes whenever anything the dashboard shows may have changed: a new probe,
 * event, table version or registry write. Clients poll it and fetch the panels only on a change.
 */
export async function dashboardFingerprint(db: Db): Promise<string> {
  const [row] = await rowsOf<Record<string, unknown>>(
    db,
    sql`
    select
      (select max(id) from events)::text as ev,
      (select max(id) from line_outcomes)::text as lo,
      (select (extract(epoch from max(started_at)) * 1000)::bigint from probe_results)::text as pr,
      (select count(*) from lines)::text as nl,
      (select (extract(epoch from max(updated_at)) * 1000)::bigint from lines)::text as lu,
      (select count(*) from samples)::text as ns,
      (select (extract(epoch from max(updated_at)) * 1000)::bigint from samples)::text as su,
      (select (extract(epoch from max(updated_at)) * 1000)::bigint from line_health)::text as hu,
      (select string_agg(route_name || ':' || version::text, ',' order by route_name) from published_tables) as tv,
      (select count(*) from routes)::text as nr,
      (select (extract(epoch from max(updated_at)) * 1000)::bigint from routes)::text as ru`,
  );
  return Object.values(row ?? {})
    .map((v) => (v === null || v === undefined ? "" : String(v)))
    .join("|");
}
