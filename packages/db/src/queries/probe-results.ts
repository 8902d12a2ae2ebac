import type { ErrorClass, ProbeResult, ScoreComponents } from "@linewatch/core";
import { and, desc, eq, gte, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "../client";
import { probeResults, samples } from "../schema/index";

export type ProbeResultRow = typeof probeResults.$inferSelect;

export interface StoredProbeResult extends ProbeResult {
  sampleName?: string;
  trigger: string;
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
    components: row.components as unknown as ScoreComponents,
    contentLength: row.contentLength,
    contentHash: row.contentHash,
    excerpt: row.excerpt,
    reasons: row.reasons,
    tokens: row.tokens,
    trigger: row.trigger,
  };
}

export type ProbeResultInsert = Omit<ProbeResult, "id" | "startedAt"> & { startedAt: Date; slot: number | null; trigger: string };

/** Insert a result; null when a result for the same scheduled slot already exists (another replica ran it). */
export async function insertProbeResult(db: Db, input: ProbeResultInsert): Promise<StoredProbeResult | null> {
  const [row] = await db
    .insert(probeResults)
    .values({ ...input, components: input.components as unknown as Record<string, number> })
    .onConflictDoNothing()
    .returning();
  return row ? toProbeResult(row) : null;
}

/** A (line, sample)'s latest results, newest first: the input of its baseline. */
export async function recentSampleResults(db: Db, lineId: string, sampleId: string, limit: number) {
  const rows = await db
    .select()
    .from(probeResults)
    .where(and(eq(probeResults.lineId, lineId), eq(probeResults.sampleId, sampleId)))
    .orderBy(desc(probeResults.startedAt))
    .limit(limit);
  return rows.map(toProbeResult);
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

/** Delete up to `batch` results older than `before`; returns how many went. Small batches never block probes for long. */
export async function deleteOldProbeResults(db: Db, before: Date, batch: number): Promise<number> {
  const old = db.select({ id: probeResults.id }).from(probeResults).where(lt(probeResults.startedAt, before)).limit(batch);
  const deleted = await db.delete(probeResults).where(inArray(probeResults.id, old)).returning({ id: probeResults.id });
  return deleted.length;
}
