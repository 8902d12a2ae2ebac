// A line that keeps passing settles its evidence and lengths at fixed points; transition then
// shares those records with the health it was given instead of copying them. Sharing must never
// show: the records are equal to what a copy would hold, and the input is never changed.
import { describe, expect, it } from "vitest";
import { withEntry } from "../../../../packages/core/src/health/evidence";
import { type Health, initialHealth, transition } from "../../../../packages/core/src/health/index";
import { policy } from "./helpers";

const T0 = 1_700_000_000_000;

describe("records shared between health versions", () => {
  it("withEntry gives the record itself only when it already holds the value", () => {
    const r = { a: 1, b: 0 };
    expect(withEntry(r, "a", 1)).toBe(r);
    const changed = withEntry(r, "a", 2);
    expect(changed).not.toBe(r);
    expect(changed).toEqual({ a: 2, b: 0 });
    expect(Object.keys(withEntry(r, "c", 0))).toEqual(["a", "b", "c"]);
    expect(withEntry({ a: 0 }, "a", -0)).toEqual({ a: -0 });
    expect(r).toEqual({ a: 1, b: 0 });
  });

  it("a steady passing line shares its settled records, and no earlier health ever changes", () => {
    const p = policy;
    let h: Health = initialHealth(T0);
    const seen: { h: Health; json: string }[] = [];
    for (let i = 0; i < 400; i++) {
      const now = T0 + i * 11_250;
      const sampleId = `s${i % 4}`;
      const passed = i % 37 !== 5;
      const next = transition(
        h,
        {
          type: "probe",
          result: { id: `p${i}`, sampleId, score: passed ? 92 : 40, passed, hardFailure: false, startedAt: now, contentLength: 300 },
          lineScore: 90,
        },
        p,
        now,
      );
      seen.push({ h, json: JSON.stringify(h) });
      h = next.health;
    }
    // Every health handed in is as it was: sharing never let a later step write into it.
    for (const s of seen) expect(JSON.stringify(s.h)).toBe(s.json);
    // And the sharing did happen: the settled counts are one record across steps.
    const last = seen.at(-1)?.h;
    expect(last?.evidence.checked).toBe(h.evidence.checked);
    expect(last?.lengths).toBe(h.lengths);
  });
});
