// A probe cadence that stays spread (docs/tables.md#probe-frequency): each (line, sample) keeps its
// phase through fast probing and after it, so distinct offsets never bunch onto one slot.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nextDueAt } from "../../../../apps/control-plane/src/prober/prober";
import { phaseAt, samplePhases, slotAfter, slotAtOrAfter, slotOffsetMs } from "../../../../packages/core/src/index";

const I = 40_000;
const T0 = Date.UTC(2026, 11, 4, 12, 0, 0);

/** The slots a row takes from `from` on at `interval`, handed back the way the prober does (nextDueAt). */
function cadence(phase: number, from: number, until: number, interval: number): number[] {
  const out: number[] = [];
  let at = slotAtOrAfter(from, phase, interval);
  while (at < until) {
    out.push(at);
    at = nextDueAt({ trigger: "schedule", nextAt: new Date(at), phase, regularAt: null }, interval, at);
  }
  return out;
}

describe("slots", () => {
  it("a line's samples spread evenly from its start; slots sit at their phase of every interval", () => {
    for (const [k, p] of samplePhases(0.9, 4).entries()) expect(p).toBeCloseTo([0.9, 0.15, 0.4, 0.65][k] as number, 12);
    expect(slotOffsetMs(0.25, I)).toBe(10_000);
    expect(slotAtOrAfter(T0, 0.25, I) - T0).toBe(10_000);
    expect(slotAtOrAfter(T0 + 10_000, 0.25, I) - T0).toBe(10_000);
    expect(slotAfter(T0 + 10_000, 0.25, I) - T0).toBe(50_000);
    // At the fast interval the same phase sits at the same fraction of the shorter interval.
    expect(slotAtOrAfter(T0 + 1, 0.25, I / 2) - T0).toBe(5_000);
    expect(phaseAt(T0 + 30_000, I)).toBe(0.75);
  });

  it("four samples due within half an interval when fast probing starts stay 5 s apart, and 10 s apart after it", () => {
    const phases = samplePhases(0.1, 4); // offsets 4, 14, 24, 34 s of 40 s
    const fastFrom = T0 + 20_000;
    const fastUntil = T0 + 120_000;
    const fast = phases.map((p) => cadence(p, fastFrom, fastUntil, I / 2));
    const all = fast.flat().sort((a, b) => a - b);
    for (let k = 1; k < all.length; k++) expect(all[k]! - all[k - 1]!).toBe(5_000);
    const after = phases.map((p) => cadence(p, fastUntil, fastUntil + 2 * I, I));
    const regular = after.flat().sort((a, b) => a - b);
    for (let k = 1; k < regular.length; k++) expect(regular[k]! - regular[k - 1]!).toBe(10_000);
    expect(regular.map((t) => (t - T0) % I).slice(0, 4)).toEqual([4_000, 14_000, 24_000, 34_000]);
  });

  it("property: distinct offsets stay distinct (and in order) under fast probing, and return exactly after it", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2_000, max: 600_000 }),
        fc.uniqueArray(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 2, maxLength: 12 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        (interval, raw, startAfter) => {
          // Offsets at least 2 ms apart within the interval: halved, they are at least 1 ms apart.
          const offsets = [...new Set(raw.map((r) => Math.floor(r * interval)))].sort((a, b) => a - b);
          const spaced = offsets.filter((o, k) => k === 0 || o - (offsets[k - 1] as number) >= 2);
          fc.pre(spaced.length >= 2 && (spaced.at(-1) as number) - (spaced[0] as number) <= interval - 2);
          const phases = spaced.map((o) => o / interval);
          const fastMs = Math.ceil(interval / 2);
          const from = T0 + startAfter;
          // Fast: one slot each per fast interval, every one distinct and in the phases' order.
          const fast = phases.map((p) => slotAtOrAfter(from, p, fastMs));
          expect(new Set(fast).size).toBe(phases.length);
          const fastOffsets = phases.map((p) => slotOffsetMs(p, fastMs));
          for (let k = 1; k < fastOffsets.length; k++) expect(fastOffsets[k]).toBeGreaterThan(fastOffsets[k - 1] as number);
          // Two fast rounds later, back at the regular interval: each at its own offset, as before.
          const back = phases.map((p, k) =>
            nextDueAt({ trigger: "schedule", nextAt: new Date((fast[k] as number) + fastMs), phase: p, regularAt: null }, interval, from),
          );
          const regular = phases.map((p) => slotOffsetMs(p, interval));
          expect(back.map((t) => t % interval)).toEqual(regular);
          for (let k = 0; k < spaced.length; k++) expect(Math.abs((regular[k] as number) - (spaced[k] as number))).toBeLessThanOrEqual(1);
          expect(new Set(back).size).toBe(phases.length);
        },
      ),
      { numRuns: Number(process.env.SLOTS_RUNS ?? 300) },
    );
  });

  it("a late probe takes its next slot after now; a confirming probe hands back the regular slot", () => {
    const late = nextDueAt({ trigger: "schedule", nextAt: new Date(T0 + 10_000), phase: 0.25, regularAt: null }, I, T0 + 95_000);
    expect(late - T0).toBe(130_000);
    const confirm = nextDueAt({ trigger: "confirm", nextAt: new Date(T0 + 12_000), phase: 0.25, regularAt: T0 + 50_000 }, I, T0 + 13_000);
    expect(confirm - T0).toBe(50_000);
    // A row stored before phases keeps where its slot sat.
    expect(nextDueAt({ trigger: "schedule", nextAt: new Date(T0 + 7_000), phase: null, regularAt: null }, I, T0 + 8_000) - T0).toBe(47_000);
  });
});
