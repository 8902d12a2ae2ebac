import { randomUUID } from "node:crypto";
import { type ErrorClass, type HealthProbe, type ProbeRelay, type ProbeResult, parseProbeRelay, relayHealthFields } from "@linewatch/core";
import { and, desc, eq, gte, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "../client";
import { probeResults, probeSchedule, samples } from "../schema/index";

export type ProbeResultRow = typeof probeResults.$inferSelect;

/** A stored result; what a relay can fake is in `relay`, and spread into the fields the health machine reads. */
export interface StoredProbeResult extends ProbeResult, Pick<HealthProbe, "fingerprint" | "usage" | "shape" | "usageFailure"> {
  sampleName?: string;
  trigger: string;
  /** The probe's relay record (core ProbeRelay); null for a hard failure; absent where not read. */
  relay?: ProbeRelay | null;
}

export function toProbeResult(row: ProbeResultRow): StoredProbeResult {
  return {
    id: row.id,
    lineId: row.lineId,
    sampleId: row.sampleId,
    startedAt: row.startedAt.getTime(),
    latencyMs: row.latencyMs,
    status: row.status,
    errorClass: row.errorClass as ErrorClass | null,
    hardFailure: row.hardFailure,
    passed: row.passed,
    score: row.score,
    components: row.components,
    checks: row.checks,
    contentLength: row.contentLength,
    contentHash: row.contentHash,
    excerpt: row.excerpt,
    reasons: row.reasons,
    tokens: row.tokens,
    trigger: row.trigger,
    ...withRelay(parseProbeRelay(row.relay)),
  };
}

/** The relay record and the health machine's fields from it. */
const withRelay = (relay: ProbeRelay | null) => ({ relay, ...relayHealthFields(relay) });

export type ProbeResultInsert = Omit<ProbeResult, "id" | "startedAt"> & {
  startedAt: Date;
  slot: number | null;
  trigger: string;
  /** Absent: none (a hard failure, or a row written by a test or a benchmark without one). */
  relay?: ProbeRelay | null;
};

/** Insert a result; null when a result for the same scheduled slot already exists (another replica ran it). */
export async function insertProbeResult(db: Db, input: ProbeResultInsert): Promise<StoredProbeResult | null> {
  const [row] = await db.insert(probeResults).values(input).onConflictDoNothing().returning();
  return row ? toProbeResult(row) : null;
}

/**
 * Rows as one JSON parameter, for `jsonb_to_recordset`: a batch of any size costs the driver and the
 * ORM one string, not a parameter per value. Strings a text column would not take as JSON are
 * mended the way the driver's UTF-8 encoding mends them: a lone surrogate (an answer cut inside an
 * emoji) and NUL become U+FFFD.
 */
export function jsonRowsParam(rows: readonly object[]): string {
  const json = JSON.stringify(rows);
  // Only an escape can be one of them: a publish's 2 MB go without the scan when none is there.
  if (!json.includes("\\u")) return json;
  return json.replace(/(?<!\\)((?:\\\\)*)\\u(?:d[89a-f][0-9a-f]{2}|0000)/g, "$1\\ufffd");
}

/** A string as a text column stores it through the driver: lone surrogates and NUL become U+FFFD. */
const wellFormed = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\0/g, "\ufffd");

/** The rows of a `db.execute` answer, whichever driver gave it. */
export function executeRows<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}

/** A claimed probe handed back with its next due time (see completeClaim). */
export interface ClaimCompletion {
  lineId: string;
  sampleId: string;
  claimedAt: Date;
  nextAt: Date;
}

/**
 * Insert many results in one statement (the prober's group commit), and in the same statement hand
 * `reschedule.items` back (completeClaim's rule: only the claimant's rows; a row whose next_at moved
 * since the claim keeps it and is only released). Each result gets its id here, so the answer says
 * exactly which were stored: null where a result for the same scheduled slot exists (another replica
 * ran it). The stored results are the inputs as written (score is 0.1-rounded, so the `real` column
 * gives it back unchanged).
 */
export async function storeProbeResults(
  db: Db,
  inputs: ProbeResultInsert[],
  reschedule: { replica: string; items: ClaimCompletion[] } | null,
): Promise<(StoredProbeResult | null)[]> {
  const completions = reschedule?.items ?? [];
  if (inputs.length === 0 && completions.length === 0) return [];
  // As stored, so the results handed back are the rows as the table has them.
  const withIds = inputs.map((input) => ({
    ...input,
    excerpt: wellFormed(input.excerpt),
    reasons: input.reasons.map(wellFormed),
    id: randomUUID(),
  }));
  const results = jsonRowsParam(
    withIds.map((r) => ({
      id: r.id,
      line_id: r.lineId,
      sample_id: r.sampleId,
      started_at: r.startedAt.toISOString(),
      latency_ms: r.latencyMs,
      status: r.status,
      error_class: r.errorClass,
      hard_failure: r.hardFailure,
      passed: r.passed,
      score: r.score,
      components: r.components,
      checks: r.checks,
      content_length: r.contentLength,
      content_hash: r.contentHash,
      excerpt: r.excerpt,
      reasons: r.reasons,
      tokens: r.tokens,
      slot: r.slot,
      trigger: r.trigger,
      relay: r.relay ?? null,
    })),
  );
  const done = jsonRowsParam(
    completions.map((c) => ({
      line_id: c.lineId,
      sample_id: c.sampleId,
      claimed_at: c.claimedAt.toISOString(),
      next_at: c.nextAt.toISOString(),
    })),
  );
  const result = await db.execute(sql`
    with ins as (
      insert into ${probeResults} (id, line_id, sample_id, started_at, latency_ms, status, error_class, hard_failure, passed, score, components, checks, content_length, content_hash, excerpt, reasons, tokens, slot, trigger, relay)
      select id, line_id, sample_id, started_at, latency_ms, status, error_class, hard_failure, passed, score, components, checks, content_length, content_hash, excerpt, reasons, tokens, slot, trigger, relay
      from jsonb_to_recordset(${results}::jsonb) as x(id uuid, line_id uuid, sample_id uuid, started_at timestamptz, latency_ms integer, status integer, error_class text, hard_failure boolean, passed boolean, score real, components jsonb, checks jsonb, content_length integer, content_hash text, excerpt text, reasons jsonb, tokens integer, slot bigint, trigger text, relay jsonb)
      on conflict do nothing
      returning id),
    done as (
      update ${probeSchedule} as s
      set next_at = case when s.next_at = v.claimed_at then v.next_at else s.next_at end,
          trigger = case when s.next_at = v.claimed_at then 'schedule' else s.trigger end,
          regular_at = case when s.next_at = v.claimed_at then null else s.regular_at end,
          claimed_by = null, claimed_until = null
      from jsonb_to_recordset(${done}::jsonb) as v(line_id uuid, sample_id uuid, claimed_at timestamptz, next_at timestamptz)
      where s.line_id = v.line_id and s.sample_id = v.sample_id and s.claimed_by = ${reschedule?.replica ?? null}
      returning 1)
    select coalesce(json_agg(id), '[]'::json)::text as ids from ins`);
  const ids = JSON.parse(executeRows<{ ids: string }>(result)[0]?.ids ?? "[]") as string[];
  const stored = new Set(ids);
  return withIds.map(({ slot: _slot, startedAt, ...r }) =>
    stored.has(r.id) ? { ...r, startedAt: startedAt.getTime(), ...withRelay(r.relay ?? null) } : null,
  );
}

/** What a baseline needs of a past result, and when it started (ms). */
export interface BaselineRow {
  lineId: string;
  sampleId: string;
  startedAt: number;
  contentLength: number;
  latencyMs: number;
  passed: boolean;
  contentHash: string | null;
  hardFailure: boolean;
}

/**
 * The baseline inputs of many (line, sample)s in one query: for each, its latest `limit` results
 * that started after `after` (all of its latest when `after` is null), newest first. Only the five
 * columns a baseline reads, so a prober keeping baselines in memory pays little to stay in step
 * with the results other replicas stored.
 */
export async function sampleHistories(
  db: Db,
  keys: { lineId: string; sampleId: string; after: Date | null }[],
  limit: number,
): Promise<BaselineRow[]> {
  if (keys.length === 0) return [];
  const param = jsonRowsParam(
    keys.map((k) => ({ line_id: k.lineId, sample_id: k.sampleId, after: k.after === null ? null : k.after.toISOString() })),
  );
  const result = await db.execute(sql`
    select k.line_id, k.sample_id, r.started_at, r.content_length, r.latency_ms, r.passed, r.content_hash, r.hard_failure
    from jsonb_to_recordset(${param}::jsonb) as k(line_id uuid, sample_id uuid, after timestamptz)
    cross join lateral (
      select started_at, content_length, latency_ms, passed, content_hash, hard_failure from ${probeResults}
      where line_id = k.line_id and sample_id = k.sample_id and (k.after is null or started_at > k.after)
      order by started_at desc
      limit ${limit}
    ) r
    order by k.line_id, k.sample_id, r.started_at desc`);
  const rows = executeRows<{
    line_id: string;
    sample_id: string;
    started_at: string | Date;
    content_length: number;
    latency_ms: number;
    passed: boolean;
    content_hash: string | null;
    hard_failure: boolean;
  }>(result);
  return rows.map((r) => ({
    lineId: r.line_id,
    sampleId: r.sample_id,
    startedAt: new Date(r.started_at).getTime(),
    contentLength: Number(r.content_length),
    latencyMs: Number(r.latency_ms),
    passed: r.passed,
    contentHash: r.content_hash,
    hardFailure: r.hard_failure,
  }));
}

/** A line's results since a time (newest first), with the sample's name and weight. */
export async function lineResultsSince(db: Db, lineId: string, since: Date, limit = 500) {
  const rows = await db
    .select({ r: probeResults, sampleName: samples.name, weight: samples.weight })
    .from(probeResults)
    .innerJoin(samples, eq(samples.id, probeResults.sampleId))
    .where(and(eq(probeResults.lineId, lineId), gte(probeResults.startedAt, since)))
    .orderBy(desc(probeResults.startedAt))
    .limit(limit);
  return rows.map(({ r, sampleName, weight }) => ({ ...toProbeResult(r), sampleName, weight }));
}

/** The latest results of a line, newest first. */
export async function latestLineResults(db: Db, lineId: string, limit: number) {
  const rows = await db
    .select({ r: probeResults, sampleName: samples.name, weight: samples.weight })
    .from(probeResults)
    .innerJoin(samples, eq(samples.id, probeResults.sampleId))
    .where(eq(probeResults.lineId, lineId))
    .orderBy(desc(probeResults.startedAt))
    .limit(limit);
  return rows.map(({ r, sampleName, weight }) => ({ ...toProbeResult(r), sampleName, weight }));
}

/** Probes and tokens a line spent since a time: what probing costs. */
export async function probeSpend(db: Db, lineId: string, since: Date): Promise<{ probes: number; tokens: number }> {
  const [row] = await db
    .select({ probes: sql<number>`count(*)::int`, tokens: sql<number>`coalesce(sum(${probeResults.tokens}), 0)::int` })
    .from(probeResults)
    .where(and(eq(probeResults.lineId, lineId), gte(probeResults.startedAt, since)));
  return { probes: row?.probes ?? 0, tokens: row?.tokens ?? 0 };
}

/**
 * A line's billing evidence since `since` (docs/scoring.md#what-a-relay-can-fake): the tokens its
 * probes' answers claimed against the tokens their references expected, per direction, summed over
 * the probes that had a reference for that direction (so the two sums compare), and how many of its
 * probes failed the usage check.
 */
export interface BillingEvidence {
  probes: number;
  claimedInput: number;
  expectedInput: number;
  claimedOutput: number;
  expectedOutput: number;
  usageFailures: number;
}

export async function billingEvidence(db: Db, lineId: string, since: Date): Promise<BillingEvidence> {
  const result = await db.execute(sql`
    select count(*)::int as probes,
      coalesce(sum((b->>'claimedInput')::float8) filter (where b->>'expectedInput' is not null and b->>'claimedInput' is not null), 0) as claimed_input,
      coalesce(sum((b->>'expectedInput')::float8) filter (where b->>'expectedInput' is not null and b->>'claimedInput' is not null), 0) as expected_input,
      coalesce(sum((b->>'claimedOutput')::float8) filter (where b->>'expectedOutput' is not null and b->>'claimedOutput' is not null), 0) as claimed_output,
      coalesce(sum((b->>'expectedOutput')::float8) filter (where b->>'expectedOutput' is not null and b->>'claimedOutput' is not null), 0) as expected_output,
      (count(*) filter (where jsonb_typeof(r.relay->'usageFailure') = 'string'))::int as usage_failures
    from ${probeResults} r cross join lateral (select r.relay->'billing' as b) x
    where r.line_id = ${lineId} and r.started_at >= ${since.toISOString()}::timestamptz and jsonb_typeof(r.relay->'billing') = 'object'`);
  const row = executeRows<Record<string, number | string>>(result)[0] ?? {};
  const n = (k: string) => Math.round(Number(row[k] ?? 0) * 10) / 10;
  return {
    probes: n("probes"),
    claimedInput: n("claimed_input"),
    expectedInput: n("expected_input"),
    claimedOutput: n("claimed_output"),
    expectedOutput: n("expected_output"),
    usageFailures: n("usage_failures"),
  };
}

/** Delete up to `batch` results older than `before`; returns how many went. Small batches never block probes for long. */
export async function deleteOldProbeResults(db: Db, before: Date, batch: number): Promise<number> {
  const old = db.select({ id: probeResults.id }).from(probeResults).where(lt(probeResults.startedAt, before)).limit(batch);
  const deleted = await db.delete(probeResults).where(inArray(probeResults.id, old)).returning({ id: probeResults.id });
  return deleted.length;
}

/** A check of a sample that its latest results could not evaluate (a bad regex, an expected answer against JSON). */
export interface BrokenCheck {
  name: string;
  detail: string;
  lines: number;
  lastSeenAt: number;
}

/**
 * The checks of a sample that its latest `limit` results (on any line) call broken: the sample asks
 * what cannot be checked, which never counts against a line, so the operator must hear of it here.
 */
export async function brokenChecksOf(db: Db, sampleId: string, limit = 200): Promise<BrokenCheck[]> {
  const result = await db.execute(sql`
    select c->>'name' as name, coalesce(c->>'detail', '') as detail, count(distinct r.line_id)::int as lines, max(r.started_at) as last
    from (select line_id, started_at, checks from ${probeResults} where sample_id = ${sampleId} order by started_at desc limit ${limit}) r,
      jsonb_array_elements(r.checks) c
    where c->>'verdict' = 'broken'
    group by 1, 2
    order by 1, 2`);
  return executeRows<{ name: string; detail: string; lines: number; last: string | Date }>(result).map((r) => ({
    name: r.name,
    detail: r.detail,
    lines: Number(r.lines),
    lastSeenAt: new Date(r.last).getTime(),
  }));
}
