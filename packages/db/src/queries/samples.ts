import type { Protocol, Sample, SampleExpect } from "@linewatch/core";
import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { samples } from "../schema/index";

export type SampleRow = typeof samples.$inferSelect;

export interface SampleWrite {
  name: string;
  protocol: Protocol;
  routes: string[];
  request: Record<string, unknown>;
  expect: SampleExpect;
  /** Default none. */
  variants?: string[];
  timeoutMs: number | null;
  weight: number;
}

export function toSample(row: SampleRow): Sample & { source: string; updatedAt: string } {
  return {
    id: row.id,
    name: row.name,
    protocol: row.protocol as Protocol,
    routes: row.routes,
    request: row.request,
    expect: row.expect as SampleExpect,
    variants: row.variants,
    timeoutMs: row.timeoutMs,
    weight: row.weight,
    source: row.source,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export async function listSamples(db: Db) {
  const rows = await db.select().from(samples).orderBy(asc(samples.name));
  return rows.map(toSample);
}

export async function getSample(db: Db, id: string) {
  const [row] = await db.select().from(samples).where(eq(samples.id, id));
  return row ? toSample(row) : null;
}

export async function insertSample(db: Db, input: SampleWrite, source: "api" | "shipped" = "api") {
  const [row] = await db
    .insert(samples)
    .values({ ...input, expect: input.expect as Record<string, unknown>, source })
    .returning();
  if (!row) throw new Error("insert returned no row");
  return toSample(row);
}

export async function updateSample(db: Db, id: string, patch: Partial<SampleWrite>, now: Date) {
  const { expect, ...rest } = patch;
  const [row] = await db
    .update(samples)
    // An edited shipped sample becomes the operator's: start-up no longer overwrites it.
    .set({ ...rest, ...(expect ? { expect: expect as Record<string, unknown> } : {}), source: "api", updatedAt: now })
    .where(eq(samples.id, id))
    .returning();
  return row ? toSample(row) : null;
}

/** Upsert by name: shipped samples in probes/ are refreshed at every start unless an operator edited them (then null). */
export async function upsertShippedSample(db: Db, input: SampleWrite, now: Date) {
  const [row] = await db
    .insert(samples)
    .values({ ...input, expect: input.expect as Record<string, unknown>, source: "shipped" })
    .onConflictDoUpdate({
      target: samples.name,
      set: {
        protocol: input.protocol,
        routes: input.routes,
        request: input.request,
        expect: input.expect as Record<string, unknown>,
        variants: input.variants ?? [],
        timeoutMs: input.timeoutMs,
        weight: input.weight,
        updatedAt: now,
      },
      setWhere: eq(samples.source, "shipped"),
    })
    .returning();
  return row ? toSample(row) : null;
}

export async function deleteSample(db: Db, id: string): Promise<boolean> {
  const deleted = await db.delete(samples).where(eq(samples.id, id)).returning({ id: samples.id });
  return deleted.length > 0;
}

/** Delete the shipped fingerprint samples no operator edited (their probe results go with them); their names. */
export async function deleteShippedFingerprintSamples(db: Db): Promise<string[]> {
  const deleted = await db
    .delete(samples)
    .where(and(eq(samples.source, "shipped"), sql`${samples.expect} ? 'fingerprint'`))
    .returning({ name: samples.name });
  return deleted.map((r) => r.name);
}
