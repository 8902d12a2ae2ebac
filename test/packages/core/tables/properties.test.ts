// Property tests of the table math over random routes and random sequences of health factors.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  computeTable,
  isPanicEligible,
  isUsable,
  type PublishedLine,
  type PublishedTable,
  publishedLineKey,
  publishTable,
  sameTable,
  type TableMember,
  type TableMode,
  type TableRoute,
  TOTAL_WEIGHT,
  tableKey,
} from "../../../../packages/core/src/tables/index";

const factorArb = fc.oneof(fc.constantFrom(0, 0.1, 0.2, 0.5, 0.9, 1), fc.double({ min: 0, max: 1, noNaN: true }));
const memberArb = (i: number) =>
  fc.record({
    lineId: fc.constant(`l${i}`),
    tier: fc.constantFrom("paid" as const, "free" as const),
    baseWeight: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.constant(100)),
    factor: factorArb,
    maxShare: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0.1, 0.25, 0.5, 1 / 3)),
    adminState: fc.constantFrom("active" as const, "active" as const, "active" as const, "drained" as const, "disabled" as const),
  });
const membersArb = fc.integer({ min: 0, max: 7 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => memberArb(i))));
const routeArb = fc.record({
  name: fc.constant("r"),
  freeShareCap: fc.oneof(fc.constantFrom(0, 0.2, 0.5, 1), fc.double({ min: 0, max: 1, noNaN: true })),
  onAllDown: fc.constantFrom("fail-open" as const, "fail-closed" as const),
});

const units = (x: number) => Math.floor(Math.min(1, Math.max(0, x)) * TOTAL_WEIGHT + 1e-9);
const capUnits = (m: TableMember) => units(m.maxShare ?? 1);

/** The lines a table may use and whether the free cap applies, as docs/tables.md says. */
function expected(route: TableRoute, members: TableMember[]) {
  const usable = members.filter(isUsable);
  if (usable.length > 0) {
    const paid = usable.some((m) => m.tier === "paid");
    return { mode: paid ? "normal" : "degraded", pool: usable, freeCap: paid ? units(route.freeShareCap) : null };
  }
  const pool = route.onAllDown === "fail-open" ? members.filter(isPanicEligible) : [];
  return { mode: "panic", pool, freeCap: pool.some((m) => m.tier === "paid") ? units(route.freeShareCap) : null };
}

describe("table properties", () => {
  it("weights are integers summing to 10000 (or an empty fail-closed / no-line table); modes as docs/tables.md", () => {
    fc.assert(
      fc.property(routeArb, membersArb, (route, members) => {
        const t = computeTable({ route, members });
        const e = expected(route, members);
        expect(t.mode).toBe(e.mode);
        const ids = new Set(e.pool.map((m) => m.lineId));
        for (const l of t.lines) {
          expect(Number.isInteger(l.weight)).toBe(true);
          expect(l.weight).toBeGreaterThan(0);
          expect(ids.has(l.lineId)).toBe(true);
        }
        const sum = t.lines.reduce((a, l) => a + l.weight, 0);
        if (e.pool.length === 0) expect(t.lines).toEqual([]);
        else expect(sum).toBe(TOTAL_WEIGHT);
      }),
      { numRuns: 800 },
    );
  });

  it("free lines' share ≤ freeShareCap unless the mode is degraded (or a panic with no paid line)", () => {
    fc.assert(
      fc.property(routeArb, membersArb, (route, members) => {
        const t = computeTable({ route, members });
        const e = expected(route, members);
        const tier = new Map<string, string>(members.map((m) => [m.lineId, m.tier]));
        const freeSum = t.lines.reduce((a, l) => (tier.get(l.lineId) === "free" ? a + l.weight : a), 0);
        if (e.freeCap !== null) expect(freeSum).toBeLessThanOrEqual(e.freeCap);
        if (t.mode === "normal") expect(e.freeCap).not.toBeNull();
      }),
      { numRuns: 800 },
    );
  });

  it("maxShare is respected whenever it can be", () => {
    fc.assert(
      fc.property(routeArb, membersArb, (route, members) => {
        const t = computeTable({ route, members });
        const e = expected(route, members);
        const paidRoom = e.pool.filter((m) => m.tier === "paid" || e.freeCap === null).reduce((a, m) => a + capUnits(m), 0);
        const freeRoom =
          e.freeCap === null
            ? 0
            : Math.min(
                e.freeCap,
                e.pool.filter((m) => m.tier === "free").reduce((a, m) => a + capUnits(m), 0),
              );
        if (e.pool.length === 0 || paidRoom + freeRoom < TOTAL_WEIGHT) return;
        const byId = new Map<string, TableMember>(members.map((m) => [m.lineId, m]));
        for (const l of t.lines) expect(l.weight).toBeLessThanOrEqual(capUnits(byId.get(l.lineId)!));
      }),
      { numRuns: 800 },
    );
  });

  it("shares follow baseWeight × factor (±1 unit) when no cap binds", () => {
    fc.assert(
      fc.property(membersArb, (members) => {
        const all = members.map((m) => ({ ...m, tier: "paid" as const, maxShare: null, adminState: "active" as const }));
        const route: TableRoute = { name: "r", freeShareCap: 0.2, onAllDown: "fail-open" };
        const usable = all.filter((m) => m.factor > 0 && m.baseWeight > 0);
        if (usable.length === 0) return;
        const total = usable.reduce((a, m) => a + m.baseWeight * m.factor, 0);
        const t = computeTable({ route, members: all });
        for (const m of usable) {
          const w = t.lines.find((l) => l.lineId === m.lineId)?.weight ?? 0;
          expect(Math.abs(w - (m.baseWeight * m.factor * TOTAL_WEIGHT) / total)).toBeLessThanOrEqual(1);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("the version changes if and only if the table changed", () => {
    const stepArb = fc.record({ line: fc.integer({ min: 0, max: 5 }), factor: factorArb, drop: fc.boolean() });
    fc.assert(
      fc.property(routeArb, membersArb, fc.array(stepArb, { maxLength: 60, size: "max" }), (route, start, steps) => {
        let members = [...start];
        let published: PublishedTable | null = null;
        let now = 0;
        for (const s of steps) {
          now += 1000;
          const i = s.line % Math.max(1, members.length);
          if (s.drop && members.length > 1) members = members.filter((_, j) => j !== i);
          else if (members[i]) members[i] = { ...members[i]!, factor: s.factor };
          const next = computeTable({ route, members });
          const r = publishTable(published, next, now);
          const changed = published === null || tableKey(published) !== tableKey(next);
          expect(r.changed).toBe(changed);
          expect(r.table.version).toBe((published?.version ?? 0) + (changed ? 1 : 0));
          expect(r.effects).toHaveLength(changed ? 1 : 0);
          expect(tableKey(r.table)).toBe(tableKey(next));
          published = r.table;
        }
      }),
      { numRuns: 120 },
    );
  });

  it("never mutates its input", () => {
    fc.assert(
      fc.property(routeArb, membersArb, (route, members) => {
        const copy = structuredClone(members);
        computeTable({ route, members });
        expect(members).toEqual(copy);
      }),
      { numRuns: 200 },
    );
  });

  it("sameTable is the same-content relation (mode, each line's key, whatever the order), in its fast path too", () => {
    // Tables of a few lines from a small pool of values, so equal tables come up often: the same lines in
    // the same order (the fast path), shuffled, with one line twice, or with one value moved.
    const lineArb = fc.record({
      lineId: fc.constantFrom("a", "b", "c", "d"),
      weight: fc.constantFrom(0, 5000, 10000),
      name: fc.constantFrom("x", "y"),
      baseUrl: fc.constantFrom("u", "v"),
      credentials: fc.constantFrom("r1", "r2"),
    });
    const toLine = (l: { lineId: string; weight: number; name: string; baseUrl: string; credentials: string }): PublishedLine => ({
      ...l,
      id: l.lineId,
      tier: "paid",
      state: "healthy",
      protocol: "openai-chat",
      model: "m",
    });
    const tableArb = fc.record({
      mode: fc.constantFrom<TableMode>("normal", "panic"),
      lines: fc.array(lineArb.map(toLine), { maxLength: 5 }),
    });
    const pairArb = fc.oneof(
      fc.tuple(tableArb, tableArb),
      tableArb.chain((t) =>
        fc.tuple(
          fc.constant(t),
          fc.oneof(
            fc.constant(structuredClone(t)),
            fc.shuffledSubarray(t.lines, { minLength: t.lines.length, maxLength: t.lines.length }).map((lines) => ({ ...t, lines })),
            fc.nat().map((i) => ({
              ...t,
              lines: t.lines.map((l, j) => (j === i % Math.max(1, t.lines.length) ? { ...l, weight: 10000 - l.weight } : l)),
            })),
            fc
              .nat()
              .map((i) => ({ ...t, lines: t.lines.map((l, j) => (j === i % Math.max(1, t.lines.length) ? { ...l, baseUrl: "w" } : l)) })),
          ),
        ),
      ),
    );
    fc.assert(
      fc.property(pairArb, ([a, b]) => {
        for (const key of [undefined, publishedLineKey]) {
          const sorted = (t: typeof a) =>
            `${t.mode}|${t.lines
              .map(key ?? ((l) => `${l.lineId}=${l.weight}`))
              .sort()
              .join(",")}`;
          expect(sameTable(a, b, key)).toBe(sorted(a) === sorted(b));
        }
      }),
      { numRuns: 500 },
    );
  });
});
