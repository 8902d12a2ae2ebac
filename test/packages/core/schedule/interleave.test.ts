// A line's samples in slot order: the golden ones spread among the fingerprint ones.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { interleave, sampleOffsetsMs } from "../../../../packages/core/src/index";

describe("interleave", () => {
  it("4 golden samples among 10 fingerprint ones keep ~11 s apart in a 45 s interval", () => {
    const order = interleave(["g0", "g1", "g2", "g3"], ["f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"]);
    expect(order).toEqual(["g0", "f0", "f1", "f2", "g1", "f3", "f4", "g2", "f5", "f6", "f7", "g3", "f8", "f9"]);
    const offsets = sampleOffsetsMs(0, 45_000, order.length);
    const golden = order.flatMap((s, i) => (s.startsWith("g") ? [offsets[i] as number] : []));
    const gaps = golden.map((t, i) => ((golden[(i + 1) % golden.length] as number) - t + 45_000) % 45_000);
    for (const gap of gaps) expect(gap).toBeLessThanOrEqual(12_900);
  });

  it("property: every element once, each list in its own order, the fewer ones never two in a row", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 20 }), (a, b) => {
        const few = Array.from({ length: a }, (_, i) => `a${i}`);
        const many = Array.from({ length: b }, (_, i) => `b${i}`);
        const out = interleave(few, many);
        expect([...out].sort()).toEqual([...few, ...many].sort());
        expect(out.filter((x) => x.startsWith("a"))).toEqual(few);
        expect(out.filter((x) => x.startsWith("b"))).toEqual(many);
        const smaller = a <= b ? "a" : "b";
        if (Math.min(a, b) > 0)
          for (let i = 1; i < out.length; i++) expect(out[i]?.startsWith(smaller) && out[i - 1]?.startsWith(smaller)).toBe(false);
      }),
    );
  });
});
