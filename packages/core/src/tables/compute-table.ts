// docs/tables.md: a route's weights from its lines' base weights and health factors.
import type { AdminState, OnAllDown, Tier } from "../types";
import { apportion } from "./apportion";
import { waterFill } from "./water-fill";

/** The weights of a table sum to this (or the table is empty). */
export const TOTAL_WEIGHT = 10_000;

export const TABLE_MODES = ["normal", "degraded", "panic"] as const;
export type TableMode = (typeof TABLE_MODES)[number];

export interface TableMember {
  lineId: string;
  name?: string;
  tier: Tier;
  /** The line's weight in this route (RouteMembership.weight). */
  baseWeight: number;
  /** weightFactor(health), 0–1. */
  factor: number;
  /** 0–1; null: no cap. */
  maxShare: number | null;
  /** Drained/disabled lines stay out even of a panic table. Default active. */
  adminState?: AdminState;
  /**
   * The protocol the line speaks. A route whose lines speak several is one table per protocol: a
   * client of one protocol can only get that protocol's lines (docs/tables.md). Absent: one group.
   */
  protocol?: string;
}

export interface TableRoute {
  name: string;
  freeShareCap: number;
  onAllDown: OnAllDown;
}

export interface TableLine {
  lineId: string;
  weight: number;
}

export interface ComputedTable<L extends TableLine = TableLine> {
  route: string;
  /** With several protocols, the worst of theirs (panic over degraded over normal). */
  mode: TableMode;
  /**
   * Lines with a weight > 0 only, in member order; the weights of each protocol's lines sum to
   * TOTAL_WEIGHT, or it has none listed.
   */
  lines: L[];
}

export interface TableInput {
  route: TableRoute;
  members: readonly TableMember[];
}

const capOf = (m: TableMember): number => Math.min(1, Math.max(0, m.maxShare ?? 1));

/** A line the table may send traffic to by its health. */
export const isUsable = (m: TableMember): boolean => m.factor > 0 && m.baseWeight > 0 && capOf(m) > 0;

/** A line a fail-open panic table may fall back to: active, whatever its health. */
export const isPanicEligible = (m: TableMember): boolean => (m.adminState ?? "active") === "active" && m.baseWeight > 0 && capOf(m) > 0;

const MODE_RANK: Record<TableMode, number> = { normal: 0, degraded: 1, panic: 2 };

/**
 * Per protocol (each protocol's lines are what a client of that protocol can get, so the free cap and
 * the panic rules hold for what it gets): computeGroup. One protocol: exactly computeGroup.
 */
export function computeTable(input: TableInput): ComputedTable {
  const { route, members } = input;
  const groups = new Map<string, TableMember[]>();
  for (const m of members) {
    const key = m.protocol ?? "";
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [m]);
    else group.push(m);
  }
  if (groups.size <= 1) return computeGroup(route, members);
  let mode: TableMode = "normal";
  const weightOf = new Map<string, number>();
  for (const group of groups.values()) {
    const part = computeGroup(route, group);
    if (MODE_RANK[part.mode] > MODE_RANK[mode]) mode = part.mode;
    for (const l of part.lines) weightOf.set(l.lineId, l.weight);
  }
  const lines = members.flatMap((m) => {
    const weight = weightOf.get(m.lineId) ?? 0;
    return weight > 0 ? [{ lineId: m.lineId, weight }] : [];
  });
  return { route: route.name, mode, lines };
}

/**
 * normal: share ∝ baseWeight × factor; free lines together ≤ freeShareCap; each ≤ maxShare.
 * degraded: no paid line usable: free lines carry the route, the free cap is lifted.
 * panic: no line usable: fail-open spreads by base weight over the active lines as if all were
 * healthy (free cap kept while an active paid line exists); fail-closed gives an empty table.
 */
function computeGroup(route: TableRoute, members: readonly TableMember[]): ComputedTable {
  const usable = members.filter(isUsable);
  if (usable.length === 0) {
    const eligible = route.onAllDown === "fail-open" ? members.filter(isPanicEligible) : [];
    const hasPaid = eligible.some((m) => m.tier === "paid");
    return build(route.name, "panic", members, eligible, (m) => m.baseWeight, hasPaid ? route.freeShareCap : null);
  }
  const hasPaid = usable.some((m) => m.tier === "paid");
  const weigh = (m: TableMember) => m.baseWeight * m.factor;
  return hasPaid
    ? build(route.name, "normal", members, usable, weigh, route.freeShareCap)
    : build(route.name, "degraded", members, usable, weigh, null);
}

function build(
  route: string,
  mode: TableMode,
  members: readonly TableMember[],
  chosen: readonly TableMember[],
  weigh: (m: TableMember) => number,
  freeCap: number | null,
): ComputedTable {
  if (chosen.length === 0) return { route, mode, lines: [] };
  // allocate and apportion return one entry per chosen line, in order: the ?? 0 below never applies.
  const shares = allocate(chosen, chosen.map(weigh), freeCap);
  const units = apportion(
    chosen.map((m, i) => ({
      id: m.lineId,
      share: shares[i] ?? 0,
      capUnits: Math.floor(capOf(m) * TOTAL_WEIGHT + 1e-9),
      free: m.tier === "free",
    })),
    TOTAL_WEIGHT,
    freeCap === null ? null : Math.floor(Math.min(1, Math.max(0, freeCap)) * TOTAL_WEIGHT + 1e-9),
  );
  const weightOf = new Map(chosen.map((m, i) => [m.lineId, units[i] ?? 0]));
  const lines = members.flatMap((m) => {
    const weight = weightOf.get(m.lineId) ?? 0;
    return weight > 0 ? [{ lineId: m.lineId, weight }] : [];
  });
  return { route, mode, lines };
}

/** Real shares summing to 1: water-fill under maxShare; then, if free lines exceed the cap, fill each group apart. */
function allocate(lines: readonly TableMember[], weights: number[], freeCap: number | null): number[] {
  const caps = lines.map(capOf);
  const shares = waterFill(weights, caps, 1);
  if (freeCap === null) return shares;
  const isFree = lines.map((m) => m.tier === "free");
  const freeSum = shares.reduce((a, s, i) => (isFree[i] ? a + s : a), 0);
  const cap = Math.min(1, Math.max(0, freeCap));
  if (freeSum <= cap + 1e-12) return shares;
  const pick = <T>(xs: T[], free: boolean): T[] => xs.filter((_, i) => isFree[i] === free);
  const freeCaps = pick(caps, true);
  const freeTotal = Math.min(
    cap,
    freeCaps.reduce((a, c) => a + c, 0),
  );
  const freeShares = waterFill(pick(weights, true), freeCaps, freeTotal);
  const paidShares = waterFill(pick(weights, false), pick(caps, false), 1 - freeTotal);
  // The free (paid) shares come in the order of the free (paid) lines, one each: the ?? 0 never applies.
  let f = 0;
  let p = 0;
  return lines.map((_, i) => (isFree[i] ? (freeShares[f++] ?? 0) : (paidShares[p++] ?? 0)));
}
