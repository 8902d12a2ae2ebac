import { mulberry32 } from "@linewatch/core";
import { createWeightedPicker, type Weighted } from "@linewatch/router-client";
import { describe, expect, it } from "vitest";

const items = (...ws: [string, number][]): Weighted[] => ws.map(([id, weight]) => ({ id, weight }));
const fixed = (v: number) => () => v;

function deepFreeze<T>(v: T): T {
  if (typeof v === "object" && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

function shares(picks: (Weighted | null)[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const p of picks) if (p) m.set(p.id, (m.get(p.id) ?? 0) + 1);
  for (const [k, v] of m) m.set(k, v / picks.length);
  return m;
}

describe("createWeightedPicker: fixed rng values", () => {
  const picker = createWeightedPicker(items(["a", 5000], ["b", 3000], ["c", 2000]));

  it.each([
    [0, "a"],
    [0.4999, "a"],
    [0.5, "b"],
    [0.7999, "b"],
    [0.8, "c"],
    [0.99999, "c"],
  ])("rng %f → %s", (r, id) => {
    expect(picker.pick(fixed(r))?.id).toBe(id);
  });

  it.each([
    // without b, the 7000 left is a:[0,5000) c:[5000,7000)
    [0, ["b"], "a"],
    [0.71, ["b"], "a"],
    [0.72, ["b"], "c"],
    // without a, b:[0,3000) c:[3000,5000)
    [0.59, ["a"], "b"],
    [0.6, ["a"], "c"],
    // without a and c only b is left
    [0.99, ["a", "c"], "b"],
    [0.5, ["c", "a", "a"], "b"],
    // unknown ids change nothing
    [0.5, ["zzz"], "b"],
  ] as const)("rng %f excluding %j → %s", (r, exclude, id) => {
    expect(picker.pick(fixed(r), { exclude })?.id).toBe(id);
  });

  it("returns null when every line with weight is excluded", () => {
    expect(picker.pick(fixed(0.3), { exclude: ["a", "b", "c"] })).toBeNull();
    expect(picker.pick(fixed(0.3), { exclude: ["a", "b", "c"], affinityKey: "k" })).toBeNull();
  });

  it("never picks a zero-weight line and returns null for an empty or all-zero table", () => {
    const p = createWeightedPicker(items(["z1", 0], ["a", 10000], ["z2", 0]));
    for (const r of [0, 0.3, 0.999]) expect(p.pick(fixed(r))?.id).toBe("a");
    expect(p.items.map((i) => i.id)).toEqual(["a"]);
    expect(createWeightedPicker([]).pick(fixed(0.5))).toBeNull();
    expect(createWeightedPicker(items(["z", 0])).pick(fixed(0.5), { affinityKey: "k" })).toBeNull();
  });

  it("does not mutate its input", () => {
    const input = deepFreeze(items(["a", 1], ["b", 0], ["c", 3]));
    const copy = structuredClone(input);
    const p = createWeightedPicker(input);
    p.pick(fixed(0.5));
    p.pick(fixed(0.5), { exclude: ["a"] });
    p.pick(fixed(0.5), { affinityKey: "x" });
    expect(input).toEqual(copy);
  });
});

describe("createWeightedPicker: distribution (seeded rng)", () => {
  const weights: [string, number][] = [
    ["a", 6000],
    ["b", 2500],
    ["c", 1000],
    ["d", 400],
    ["e", 100],
  ];
  const picker = createWeightedPicker(items(...weights));

  it("10,000 picks match the weights within 2 percentage points", () => {
    const rng = mulberry32(42);
    const got = shares(Array.from({ length: 10_000 }, () => picker.pick(rng)));
    for (const [id, w] of weights) expect(Math.abs((got.get(id) ?? 0) - w / 10000)).toBeLessThan(0.02);
  });

  it("with an excluded line, picks spread over the rest in proportion", () => {
    const rng = mulberry32(7);
    const got = shares(Array.from({ length: 10_000 }, () => picker.pick(rng, { exclude: ["a"] })));
    expect(got.has("a")).toBe(false);
    for (const [id, w] of weights.slice(1)) expect(Math.abs((got.get(id) ?? 0) - w / 4000)).toBeLessThan(0.02);
  });

  it("10,000 affinity keys spread by weight within 2 percentage points", () => {
    const got = shares(Array.from({ length: 10_000 }, (_, i) => picker.pick(fixed(0), { affinityKey: `user-${i}` })));
    for (const [id, w] of weights) expect(Math.abs((got.get(id) ?? 0) - w / 10000)).toBeLessThan(0.02);
  });

  it("an affinity key ignores rng and always lands on the same line", () => {
    const first = picker.pick(fixed(0), { affinityKey: "session-1" });
    for (const r of [0.1, 0.5, 0.99]) expect(picker.pick(fixed(r), { affinityKey: "session-1" })).toBe(first);
  });
});

describe("weighted rendezvous: only the sessions of a changed line move", () => {
  const keys = Array.from({ length: 5000 }, (_, i) => `sess-${i}`);
  const assign = (ws: [string, number][]) => {
    const p = createWeightedPicker(items(...ws));
    return new Map(keys.map((k) => [k, p.pick(fixed(0), { affinityKey: k })?.id]));
  };

  it("removing a line moves only its sessions, spread over the rest by weight", () => {
    const before = assign([
      ["a", 5000],
      ["b", 3000],
      ["c", 2000],
    ]);
    // The control plane renormalises the remaining weights to 10000.
    const after = assign([
      ["a", 6250],
      ["b", 3750],
    ]);
    const moved = keys.filter((k) => before.get(k) !== after.get(k));
    expect(moved.length).toBeGreaterThan(0);
    for (const k of moved) expect(before.get(k)).toBe("c");
    for (const k of keys) if (before.get(k) === "c") expect(after.get(k)).not.toBe("c");
    const toA = moved.filter((k) => after.get(k) === "a").length / moved.length;
    expect(Math.abs(toA - 0.625)).toBeLessThan(0.05);
  });

  it("adding a line takes sessions only to the new line, about its share", () => {
    const before = assign([
      ["a", 5000],
      ["b", 5000],
    ]);
    const after = assign([
      ["a", 4000],
      ["b", 4000],
      ["d", 2000],
    ]);
    const moved = keys.filter((k) => before.get(k) !== after.get(k));
    for (const k of moved) expect(after.get(k)).toBe("d");
    expect(Math.abs(moved.length / keys.length - 0.2)).toBeLessThan(0.02);
  });

  it("excluding a session's line sends it to its next choice, consistently", () => {
    const p = createWeightedPicker(items(["a", 5000], ["b", 3000], ["c", 2000]));
    for (const k of keys.slice(0, 200)) {
      const first = p.pick(fixed(0), { affinityKey: k });
      const second = p.pick(fixed(0), { affinityKey: k, exclude: [first?.id ?? ""] });
      expect(second).not.toBeNull();
      expect(second?.id).not.toBe(first?.id);
      expect(p.pick(fixed(0.9), { affinityKey: k, exclude: [first?.id ?? ""] })).toBe(second);
    }
  });
});
