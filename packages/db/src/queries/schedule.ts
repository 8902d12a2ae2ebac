import {
  type FingerprintTrack,
  type LengthTrack,
  OFFSET_SLACK_MS,
  parseFingerprintTrack,
  parseLengthTrack,
  parseShapeTrack,
  parseUsageTrack,
  type ShapeTrack,
  type UsageTrack,
} from "@linewatch/core";
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { lineHealth, probeResults, probeSchedule, replicas, webhookDeliveries } from "../schema/index";
import { type ClaimCompletion, executeRows, jsonRowsParam } from "./probe-results";

export interface ScheduleRow {
  lineId: string;
  sampleId: string;
  nextAt: Date;
  trigger: string;
  /** Where in its interval the pair probes (core's slots.ts); null: a row stored before phases. */
  phase: number | null;
}

export async function listSchedule(db: Db): Promise<ScheduleRow[]> {
  return db
    .select({
      lineId: probeSchedule.lineId,
      sampleId: probeSchedule.sampleId,
      nextAt: probeSchedule.nextAt,
      trigger: probeSchedule.trigger,
      phase: probeSchedule.phase,
    })
    .from(probeSchedule);
}

/** Which (line, sample) pairs have a schedule row, and whether it has its phase: what reconciling needs. */
export async function listScheduleKeys(db: Db): Promise<{ lineId: string; sampleId: string; phase: number | null }[]> {
  return db.select({ lineId: probeSchedule.lineId, sampleId: probeSchedule.sampleId, phase: probeSchedule.phase }).from(probeSchedule);
}

export async function insertScheduleRows(
  db: Db,
  rows: { lineId: string; sampleId: string; nextAt: Date; phase?: number | null }[],
): Promise<void> {
  if (rows.length === 0) return;
  await db.insert(probeSchedule).values(rows).onConflictDoNothing();
}

/** Give rows stored before phases their phase (one statement); their next slot moves there when they are next handed back. */
export async function setSchedulePhases(db: Db, rows: { lineId: string; sampleId: string; phase: number }[]): Promise<void> {
  if (rows.length === 0) return;
  const param = jsonRowsParam(rows.map((r) => ({ line_id: r.lineId, sample_id: r.sampleId, phase: r.phase })));
  await db.execute(sql`
    update ${probeSchedule} as s set phase = v.phase
    from jsonb_to_recordset(${param}::jsonb) as v(line_id uuid, sample_id uuid, phase double precision)
    where s.line_id = v.line_id and s.sample_id = v.sample_id and s.phase is null`);
}

export async function deleteScheduleRow(db: Db, lineId: string, sampleId: string): Promise<void> {
  await db.delete(probeSchedule).where(and(eq(probeSchedule.lineId, lineId), eq(probeSchedule.sampleId, sampleId)));
}

/** A claimed probe with what the prober needs to send it, read in the claiming statement. */
export interface ClaimedProbe extends ScheduleRow {
  /** When the pair's newest stored result started (ms), null when it has none: is a baseline kept in memory still current? */
  newestResultAt: number | null;
  /** The line probes at the fast interval: a trend alert's window is open and the line is not in cooldown. */
  fast: boolean;
  /** A confirming re-probe's regular slot (ms), which the next one keeps; null for a regular probe. */
  regularAt: number | null;
  /** The line's usual answer length for this sample (health's length track); null before it has one. */
  lengthTrack: LengthTrack | null;
  /**
   * What a relay can fake (docs/scoring.md#what-a-relay-can-fake), as the line's health holds it: its
   * fingerprint track for this sample (a fingerprint sample's only), its usage track for the sample,
   * and the shape of its answers; null before it has one.
   */
  fingerprintTrack: FingerprintTrack | null;
  usageTrack: UsageTrack | null;
  shapeTrack: ShapeTrack | null;
}

/**
 * Claim up to `limit` due probes for `replica` until `leaseUntil`, and in the same statement for each
 * claimed probe the start of its pair's newest result and, when it may be probing fast, its line's
 * health: one round trip per claimed batch. SKIP LOCKED lets replicas claim side by side without
 * waiting on each other; the lease returns a probe whose replica died.
 */
export async function claimDueProbesWithContext(
  db: Db,
  replica: string,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<ClaimedProbe[]> {
  if (limit <= 0) return [];
  const result = await db.execute(sql`
    with c as (
      update ${probeSchedule} set claimed_by = ${replica}, claimed_until = ${leaseUntil.toISOString()}::timestamptz
      where (line_id, sample_id) in (
        select line_id, sample_id from ${probeSchedule}
        where next_at <= ${now.toISOString()}::timestamptz
          and (claimed_until is null or claimed_until < ${now.toISOString()}::timestamptz)
        order by next_at
        limit ${limit}
        for update skip locked)
      returning line_id, sample_id, next_at, trigger, phase, regular_at, fast_until)
    select coalesce(json_agg(json_build_object(
      'lineId', c.line_id, 'sampleId', c.sample_id, 'nextAt', c.next_at, 'trigger', c.trigger, 'phase', c.phase,
      'newestResultAt', (select max(r.started_at) from ${probeResults} r where r.line_id = c.line_id and r.sample_id = c.sample_id),
      'fast', coalesce(c.fast_until > ${now.toISOString()}::timestamptz and coalesce(h.state, 'healthy') <> 'cooldown', false),
      'regularAt', c.regular_at,
      'lengthTrack', h.health->'lengths'->(c.sample_id::text),
      'fingerprintTrack', h.health->'fingerprints'->(c.sample_id::text),
      'usageTrack', h.health->'usage'->(c.sample_id::text),
      'shapeTrack', h.health->'shape')), '[]'::json)::text as rows
    from c left join ${lineHealth} h on h.line_id = c.line_id`);
  const rows = JSON.parse(executeRows<{ rows: string }>(result)[0]?.rows ?? "[]") as {
    lineId: string;
    sampleId: string;
    nextAt: string;
    trigger: string;
    phase: number | null;
    newestResultAt: string | null;
    fast: boolean;
    regularAt: string | null;
    lengthTrack: unknown;
    fingerprintTrack: unknown;
    usageTrack: unknown;
    shapeTrack: unknown;
  }[];
  return rows.map((r) => ({
    lineId: r.lineId,
    sampleId: r.sampleId,
    nextAt: new Date(r.nextAt),
    trigger: r.trigger,
    phase: r.phase,
    newestResultAt: r.newestResultAt === null ? null : new Date(r.newestResultAt).getTime(),
    fast: r.fast,
    regularAt: r.regularAt === null ? null : new Date(r.regularAt).getTime(),
    lengthTrack: parseLengthTrack(r.lengthTrack),
    fingerprintTrack: parseFingerprintTrack(r.fingerprintTrack),
    usageTrack: parseUsageTrack(r.usageTrack),
    shapeTrack: parseShapeTrack(r.shapeTrack),
  }));
}

/** Hand a claimed probe back with its next due time. Only the claimant may (a lost lease is a no-op). */
export async function completeClaim(
  db: Db,
  replica: string,
  lineId: string,
  sampleId: string,
  claimedAt: Date,
  nextAt: Date,
): Promise<void> {
  // One statement: SET sees the row as it was, so a confirming probe asked for meanwhile (next_at
  // moved off the claimed slot) keeps its earlier next_at and trigger, and the claim is released.
  const unmoved = sql`${probeSchedule.nextAt} = ${claimedAt.toISOString()}::timestamptz`;
  await db
    .update(probeSchedule)
    .set({
      nextAt: sql`case when ${unmoved} then ${nextAt.toISOString()}::timestamptz else ${probeSchedule.nextAt} end`,
      trigger: sql`case when ${unmoved} then 'schedule' else ${probeSchedule.trigger} end`,
      regularAt: sql`case when ${unmoved} then null else ${probeSchedule.regularAt} end`,
      claimedBy: null,
      claimedUntil: null,
    })
    .where(and(eq(probeSchedule.lineId, lineId), eq(probeSchedule.sampleId, sampleId), eq(probeSchedule.claimedBy, replica)));
}

/**
 * Hand many claimed probes back in one statement, each with its next due time: what completeClaim
 * does for one. Only the claimant's rows change; a row whose next_at moved since the claim (a
 * confirming probe asked for meanwhile) keeps it and its trigger, and is only released.
 */
export async function completeClaims(db: Db, replica: string, items: ClaimCompletion[]): Promise<void> {
  if (items.length === 0) return;
  const param = jsonRowsParam(
    items.map((i) => ({
      line_id: i.lineId,
      sample_id: i.sampleId,
      claimed_at: i.claimedAt.toISOString(),
      next_at: i.nextAt.toISOString(),
    })),
  );
  await db.execute(sql`
    update ${probeSchedule} as s
    set next_at = case when s.next_at = v.claimed_at then v.next_at else s.next_at end,
        trigger = case when s.next_at = v.claimed_at then 'schedule' else s.trigger end,
        regular_at = case when s.next_at = v.claimed_at then null else s.regular_at end,
        claimed_by = null, claimed_until = null
    from jsonb_to_recordset(${param}::jsonb) as v(line_id uuid, sample_id uuid, claimed_at timestamptz, next_at timestamptz)
    where s.line_id = v.line_id and s.sample_id = v.sample_id and s.claimed_by = ${replica}`);
}

/**
 * Core's `fast_probe_until` effect, applied: the line probes at the fast interval until `until`, and
 * each regular probe not yet claimed moves to its own next slot at the fast interval (at or after
 * `now`: k · fastMs + its phase's offset, core's slotAtOrAfter), at most one fast interval away. Each
 * sample keeps its place in the interval, so samples due within the saving are not pulled onto one
 * slot, and none keeps a regular slot another's fast slot may share. A row without a phase keeps
 * where its next_at sits within the fast interval.
 */
export async function setFastProbing(db: Db, lineId: string, until: Date, now: Date, fastMs: number): Promise<void> {
  const f = Math.max(1, Math.round(fastMs));
  const nowMs = now.getTime();
  // The row's offset within the fast interval (ms), then its first slot at or after now.
  const fms = sql`${f}::numeric`;
  // In float8 with the same slack, as core's slotOffsetMs works it out: both put a phase on the same millisecond.
  const offset = sql`least(floor(coalesce(phase, (mod(round(extract(epoch from next_at) * 1000), ${fms}) / ${fms})::float8) * ${f}::float8 + ${OFFSET_SLACK_MS}::float8), ${f - 1})::numeric`;
  const slot = sql`(timestamptz 'epoch' + ((${offset}) + ceil((${nowMs}::numeric - (${offset})) / ${fms}) * ${fms}) * interval '1 millisecond')`;
  await db.execute(sql`
    update ${probeSchedule} set fast_until = ${until.toISOString()}::timestamptz,
      next_at = case when trigger = 'schedule' and claimed_by is null then ${slot} else next_at end
    where line_id = ${lineId}`);
}

/** Bring a (line, sample)'s next probe forward to `at` (never later than it already is). */
export async function expediteProbe(db: Db, lineId: string, sampleId: string, at: Date, trigger: string): Promise<void> {
  await db
    .update(probeSchedule)
    .set({
      nextAt: sql`least(${probeSchedule.nextAt}, ${at.toISOString()}::timestamptz)`,
      trigger: sql`case when ${at.toISOString()}::timestamptz < ${probeSchedule.nextAt} then ${trigger} else ${probeSchedule.trigger} end`,
      // The regular slot this one stands in front of: the probe after it keeps the cadence.
      regularAt: sql`case when ${at.toISOString()}::timestamptz < ${probeSchedule.nextAt} then coalesce(${probeSchedule.regularAt}, ${probeSchedule.nextAt}) else ${probeSchedule.regularAt} end`,
    })
    .where(and(eq(probeSchedule.lineId, lineId), eq(probeSchedule.sampleId, sampleId)));
}

/**
 * Release every claim held under `replica`: called by a replica as it starts, when nothing of its
 * own can be in flight yet, so the claims of its previous life (killed mid-probe) do not wait out
 * their lease. Replica ids must therefore be unique among running replicas.
 */
export async function releaseClaimsOf(db: Db, replica: string): Promise<number> {
  const released = await db
    .update(probeSchedule)
    .set({ claimedBy: null, claimedUntil: null })
    .where(eq(probeSchedule.claimedBy, replica))
    .returning({ lineId: probeSchedule.lineId });
  return released.length;
}

/**
 * Record that `replica` is alive at `now`, and release the claims of every replica whose heartbeat
 * is older than `staleBefore` (or that never sent one): its process is gone, so what it claimed
 * (probes, and webhook deliveries) is due again now rather than when its lease ends. Replicas not heard from for a day are forgotten.
 * One statement; returns how many claims were released.
 */
export async function heartbeatAndReleaseDead(
  db: Db,
  replica: string,
  now: Date,
  staleBefore: Date | null,
  where: { host: string; pid: number } | null = null,
): Promise<number> {
  const result = await db.execute(sql`
    with beat as (
      insert into ${replicas} (id, heartbeat_at, host, pid)
      values (${replica}, ${now.toISOString()}::timestamptz, ${where?.host ?? null}, ${where?.pid ?? null}::int)
      on conflict (id) do update set heartbeat_at = excluded.heartbeat_at, host = excluded.host, pid = excluded.pid
      returning id),
    forgotten as (
      delete from ${replicas} where heartbeat_at < ${new Date(now.getTime() - 86_400_000).toISOString()}::timestamptz and id <> ${replica}
      returning id),
    released as (
      update ${probeSchedule} set claimed_by = null, claimed_until = null
      where ${staleBefore !== null} and claimed_by is not null and claimed_by <> ${replica}
        and claimed_by not in (
          select id from ${replicas} where heartbeat_at >= ${(staleBefore ?? now).toISOString()}::timestamptz)
      returning 1),
    released_deliveries as (
      update ${webhookDeliveries} set claimed_by = null, claimed_until = null
      where ${staleBefore !== null} and status = 'pending' and claimed_by is not null and claimed_by <> ${replica}
        and claimed_by not in (
          select id from ${replicas} where heartbeat_at >= ${(staleBefore ?? now).toISOString()}::timestamptz)
      returning 1)
    select ((select count(*) from released) + (select count(*) from released_deliveries))::int as released,
      (select count(*) from beat)::int as beat, (select count(*) from forgotten)::int as forgotten`);
  return executeRows<{ released: number }>(result)[0]?.released ?? 0;
}

/** The replicas that said they run on `host`, with their pids: whose process may be gone (restart-claims.ts). */
export async function replicasOnHost(db: Db, host: string): Promise<{ id: string; pid: number | null; heartbeatAt: Date }[]> {
  return db.select({ id: replicas.id, pid: replicas.pid, heartbeatAt: replicas.heartbeatAt }).from(replicas).where(eq(replicas.host, host));
}

/**
 * Take over what replicas whose process is gone held: their probe and webhook claims are released
 * and they are forgotten, in one statement. Returns how many claims were released.
 */
export async function releaseReplicas(db: Db, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const param = jsonRowsParam(ids.map((id) => ({ id })));
  const result = await db.execute(sql`
    with dead as (select id from jsonb_to_recordset(${param}::jsonb) as v(id text)),
    released as (
      update ${probeSchedule} set claimed_by = null, claimed_until = null
      where claimed_by in (select id from dead) returning 1),
    released_deliveries as (
      update ${webhookDeliveries} set claimed_by = null, claimed_until = null
      where status = 'pending' and claimed_by in (select id from dead) returning 1),
    forgotten as (delete from ${replicas} where id in (select id from dead) returning 1)
    select ((select count(*) from released) + (select count(*) from released_deliveries))::int as released,
      (select count(*) from forgotten)::int as forgotten`);
  return executeRows<{ released: number }>(result)[0]?.released ?? 0;
}

/** Release every claim, whoever holds it: for a database only one process can use (the embedded one), at start. */
export async function releaseAllClaims(db: Db): Promise<number> {
  const released = await db
    .update(probeSchedule)
    .set({ claimedBy: null, claimedUntil: null })
    .where(sql`${probeSchedule.claimedBy} is not null`)
    .returning({ lineId: probeSchedule.lineId });
  return released.length;
}
