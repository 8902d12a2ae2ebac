import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { probeSchedule } from "../schema/index";

export interface ScheduleRow {
  lineId: string;
  sampleId: string;
  nextAt: Date;
  trigger: string;
}

export async function listSchedule(db: Db): Promise<ScheduleRow[]> {
  return db.select({ lineId: probeSchedule.lineId, sampleId: probeSchedule.sampleId, nextAt: probeSchedule.nextAt, trigger: probeSchedule.trigger }).from(probeSchedule);
}

export async function insertScheduleRows(db: Db, rows: { lineId: string; sampleId: string; nextAt: Date }[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insert(probeSchedule).values(rows).onConflictDoNothing();
}

export async function deleteScheduleRow(db: Db, lineId: string, sampleId: string): Promise<void> {
  await db.delete(probeSchedule).where(and(eq(probeSchedule.lineId, lineId), eq(probeSchedule.sampleId, sampleId)));
}

/**
 * Claim up to `limit` due probes for `replica` until `leaseUntil`. SKIP LOCKED lets replicas claim
 * side by side without waiting on each other; the lease returns a probe whose replica died.
 */
export async function claimDueProbes(db: Db, replica: string, now: Date, leaseUntil: Date, limit: number): Promise<ScheduleRow[]> {
  if (limit <= 0) return [];
  const result = await db.execute(sql`
    update ${probeSchedule} set claimed_by = ${replica}, claimed_until = ${leaseUntil.toISOString()}::timestamptz
    where (line_id, sample_id) in (
      select line_id, sample_id from ${probeSchedule}
      where next_at <= ${now.toISOString()}::timestamptz
        and (claimed_until is null or claimed_until < ${now.toISOString()}::timestamptz)
      order by next_at
      limit ${limit}
      for update skip locked)
    returning line_id, sample_id, next_at, trigger`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { line_id: string; sample_id: string; next_at: string | Date; trigger: string }[];
  return rows.map((r) => ({ lineId: r.line_id, sampleId: r.sample_id, nextAt: new Date(r.next_at), trigger: r.trigger }));
}

/** Hand a claimed probe back with its next due time. Only the claimant may (a lost lease is a no-op). */
export async function completeClaim(db: Db, replica: string, lineId: string, sampleId: string, claimedAt: Date, nextAt: Date): Promise<void> {
  await db
    .update(probeSchedule)
    .set({ nextAt, trigger: "schedule", claimedBy: null, claimedUntil: null })
    .where(
      and(
        eq(probeSchedule.lineId, lineId),
        eq(probeSchedule.sampleId, sampleId),
        eq(probeSchedule.claimedBy, replica),
        // A confirming probe asked for meanwhile (earlier next_at) wins over the regular cadence.
        eq(probeSchedule.nextAt, claimedAt),
      ),
    );
  await db
    .update(probeSchedule)
    .set({ claimedBy: null, claimedUntil: null })
    .where(and(eq(probeSchedule.lineId, lineId), eq(probeSchedule.sampleId, sampleId), eq(probeSchedule.claimedBy, replica)));
}

/** Bring a (line, sample)'s next probe forward to `at` (never later than it already is). */
export async function expediteProbe(db: Db, lineId: string, sampleId: string, at: Date, trigger: string): Promise<void> {
  await db
    .update(probeSchedule)
    .set({ nextAt: sql`least(${probeSchedule.nextAt}, ${at.toISOString()}::timestamptz)`, trigger: sql`case when ${at.toISOString()}::timestamptz < ${probeSchedule.nextAt} then ${trigger} else ${probeSchedule.trigger} end` })
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
