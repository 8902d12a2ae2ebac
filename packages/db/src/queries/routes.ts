import type { HealthPolicy, OnAllDown } from "@linewatch/core";
import { asc, eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { lines, routeLines, routes, samples } from "../schema/index";

export type RouteRow = typeof routes.$inferSelect;

export interface RouteWrite {
  name: string;
  freeShareCap: number;
  onAllDown: OnAllDown;
  policy: Partial<HealthPolicy> | null;
}

export interface RouteMember {
  id: string;
  name: string;
  tier: string;
  weight: number;
  adminState: string;
  maxShare: number | null;
  protocol: string;
}

export async function listRouteRows(db: Db): Promise<RouteRow[]> {
  return db.select().from(routes).orderBy(asc(routes.name));
}

export async function getRouteRow(db: Db, name: string): Promise<RouteRow | null> {
  const [row] = await db.select().from(routes).where(eq(routes.name, name));
  return row ?? null;
}

export async function routeMembers(db: Db, name: string): Promise<RouteMember[]> {
  return db
    .select({
      id: lines.id,
      name: lines.name,
      tier: lines.tier,
      weight: routeLines.weight,
      adminState: lines.adminState,
      maxShare: lines.maxShare,
      protocol: lines.protocol,
    })
    .from(routeLines)
    .innerJoin(lines, eq(lines.id, routeLines.lineId))
    .where(eq(routeLines.routeName, name))
    .orderBy(asc(lines.name));
}

export async function insertRoute(db: Db, input: RouteWrite): Promise<RouteRow> {
  const [row] = await db.insert(routes).values(input).returning();
  if (!row) throw new Error("insert returned no row");
  return row;
}

export async function updateRoute(db: Db, name: string, patch: Partial<Omit<RouteWrite, "name">>, now: Date) {
  const [row] = await db
    .update(routes)
    .set({ ...patch, updatedAt: now })
    .where(eq(routes.name, name))
    .returning();
  return row ?? null;
}

/** Who still refers to a route: its member lines and the samples that name it. */
export async function routeReferences(db: Db, name: string): Promise<{ lines: string[]; samples: string[] }> {
  const members = await routeMembers(db, name);
  const sampleRows = await db
    .select({ name: samples.name })
    .from(samples)
    .where(sql`${samples.routes} @> ${JSON.stringify([name])}::jsonb`);
  return { lines: members.map((m) => m.name), samples: sampleRows.map((s) => s.name) };
}

/** Delete a route; with `cascade`, first drop its memberships and its name from samples. */
export async function deleteRoute(db: Db, name: string, cascade: boolean): Promise<boolean> {
  return db.transaction(async (tx) => {
    if (cascade) {
      await tx.delete(routeLines).where(eq(routeLines.routeName, name));
      await tx
        .update(samples)
        .set({ routes: sql`${samples.routes} - ${name}::text` })
        .where(sql`${samples.routes} @> ${JSON.stringify([name])}::jsonb`);
    }
    const deleted = await tx.delete(routes).where(eq(routes.name, name)).returning({ name: routes.name });
    return deleted.length > 0;
  });
}
