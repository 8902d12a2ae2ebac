import { describe, expect, it } from "vitest";
import {
  apportion,
  computeTable,
  type PublishedLine,
  parsePublishedLines,
  publishedLineKey,
  publishTable,
  publishTableBy,
  routeWarnings,
  sameTable,
  type TableMember,
  type TableRoute,
  waterFill,
} from "../../../../packages/core/src/tables/index";

const route: TableRoute = { name: "chat-default", freeShareCap: 0.2, onAllDown: "fail-open" };
const paid = (lineId: string, over: Partial<TableMember> = {}): TableMember => ({
  lineId,
  tier: "paid",
  baseWeight: 100,
  factor: 1,
  maxShare: null,
  ...over,
});
const free = (lineId: string, over: Partial<TableMember> = {}): TableMember => ({
  lineId,
  tier: "free",
  baseWeight: 100,
  factor: 1,
  maxShare: null,
  ...over,
});
const weights = (members: TableMember[], r: TableRoute = route) => {
  const t = computeTable({ route: r, members });
  return { mode: t.mode, w: Object.fromEntries(t.lines.map((l) => [l.lineId, l.weight])) };
};

describe("computeTable", () => {
  it.each([
    { name: "by base weight", members: [paid("a", { baseWeight: 300 }), paid("b")], mode: "normal", w: { a: 7500, b: 2500 } },
    { name: "scaled by factor", members: [paid("a"), paid("b", { factor: 0.5 })], mode: "normal", w: { a: 6667, b: 3333 } },
    { name: "free lines capped at 20%, the cut goes to paid", members: [paid("a"), free("f")], mode: "normal", w: { a: 8000, f: 2000 } },
    {
      name: "free cap shared in proportion",
      members: [paid("a"), free("f", { baseWeight: 300 }), free("g")],
      mode: "normal",
      w: { a: 8000, f: 1500, g: 500 },
    },
    {
      name: "free below the cap keeps its share",
      members: [paid("a", { baseWeight: 900 }), free("f")],
      mode: "normal",
      w: { a: 9000, f: 1000 },
    },
    {
      name: "maxShare cuts go to the others in proportion",
      members: [paid("a", { maxShare: 0.5, baseWeight: 800 }), paid("b", { baseWeight: 100 }), paid("c", { baseWeight: 100 })],
      mode: "normal",
      w: { a: 5000, b: 2500, c: 2500 },
    },
    {
      name: "water-filling iterates",
      members: [
        paid("a", { maxShare: 0.4, baseWeight: 600 }),
        paid("b", { maxShare: 0.35, baseWeight: 300 }),
        paid("c", { baseWeight: 100 }),
      ],
      mode: "normal",
      w: { a: 4000, b: 3500, c: 2500 },
    },
    {
      name: "zero-factor lines are left out",
      members: [paid("a"), paid("b", { factor: 0 }), free("f", { factor: 0 })],
      mode: "normal",
      w: { a: 10000 },
    },
    {
      name: "no paid line usable: degraded, free cap lifted",
      members: [paid("a", { factor: 0 }), free("f"), free("g")],
      mode: "degraded",
      w: { f: 5000, g: 5000 },
    },
    {
      name: "all-free route runs degraded",
      members: [free("f", { baseWeight: 300 }), free("g")],
      mode: "degraded",
      w: { f: 7500, g: 2500 },
    },
    {
      name: "no line usable: panic by base weight, free cap kept",
      members: [paid("a", { factor: 0, baseWeight: 300 }), paid("b", { factor: 0 }), free("f", { factor: 0, baseWeight: 600 })],
      mode: "panic",
      w: { a: 6000, b: 2000, f: 2000 },
    },
    {
      name: "panic leaves out drained and disabled lines",
      members: [paid("a", { factor: 0 }), paid("b", { factor: 0, adminState: "drained" })],
      mode: "panic",
      w: { a: 10000 },
    },
    {
      name: "maxShare that cannot hold is broken evenly",
      members: [paid("a", { maxShare: 0.3 }), paid("b", { maxShare: 0.2 })],
      mode: "normal",
      w: { a: 6000, b: 4000 },
    },
    {
      name: "paid maxShare under the free cap: paid breaks maxShare, not the free cap",
      members: [paid("a", { maxShare: 0.5 }), free("f")],
      mode: "normal",
      w: { a: 8000, f: 2000 },
    },
  ])("$name", ({ members, mode, w }) => {
    expect(weights(members)).toEqual({ mode, w });
  });

  it("fail-closed: no line usable gives an empty panic table", () => {
    expect(computeTable({ route: { ...route, onAllDown: "fail-closed" }, members: [paid("a", { factor: 0 })] })).toEqual({
      route: "chat-default",
      mode: "panic",
      lines: [],
    });
  });

  it("a thirds split sums to exactly 10000 by largest remainder", () => {
    expect(weights([paid("a"), paid("b"), paid("c")]).w).toEqual({ a: 3334, b: 3333, c: 3333 });
  });

  it("lines come in member order", () => {
    const t = computeTable({ route, members: [paid("z"), paid("a")] });
    expect(t.lines.map((l) => l.lineId)).toEqual(["z", "a"]);
  });
});

describe("waterFill and apportion", () => {
  it("waterFill redistributes what a cap cuts", () => {
    const s = waterFill([8, 1, 1], [0.5, 1, 1], 1);
    expect(s.map((x) => Math.round(x * 1000))).toEqual([500, 250, 250]);
  });
  it("apportion keeps a line under its cap when another has room", () => {
    const units = apportion(
      [
        { id: "a", share: 1 / 3, capUnits: 3333, free: false },
        { id: "b", share: 2 / 3, capUnits: 10000, free: false },
      ],
      10000,
      null,
    );
    expect(units).toEqual([3333, 6667]);
  });
});

describe("publishTable", () => {
  it("versions from 1 and only when the table changed", () => {
    const t1 = computeTable({ route, members: [paid("a"), paid("b")] });
    const p1 = publishTable(null, t1, 1000, { reason: "line_set", probeIds: [] });
    expect(p1.table).toMatchObject({ version: 1, generatedAt: 1000 });
    expect(p1.effects).toEqual([
      {
        kind: "table_published",
        route: "chat-default",
        version: 1,
        previousVersion: null,
        mode: "normal",
        reason: "line_set",
        probeIds: [],
      },
    ]);
    const same = publishTable(p1.table, computeTable({ route, members: [paid("b"), paid("a")] }), 2000);
    expect(same).toEqual({ table: p1.table, changed: false, effects: [] });
    const p2 = publishTable(p1.table, computeTable({ route, members: [paid("a"), paid("b", { factor: 0 })] }), 3000, {
      reason: "consecutive_failures",
      probeIds: ["x", "y"],
    });
    expect(p2.table).toMatchObject({ version: 2, generatedAt: 3000, lines: [{ lineId: "a", weight: 10000 }] });
    expect(p2.effects[0]).toMatchObject({ previousVersion: 1, probeIds: ["x", "y"] });
  });
  it("a mode change alone is a new version (ETag = version)", () => {
    const normal = computeTable({ route, members: [paid("a")] });
    const panic = computeTable({ route, members: [paid("a", { factor: 0 })] });
    expect(normal.lines).toEqual(panic.lines);
    expect(sameTable(normal, panic)).toBe(false);
  });
});

describe("publishTableBy with publishedLineKey", () => {
  const line = (over: Partial<PublishedLine> = {}): PublishedLine => ({
    lineId: "a",
    id: "a",
    weight: 10000,
    name: "paid-a",
    tier: "paid",
    state: "healthy",
    protocol: "openai-chat",
    baseUrl: "http://u/v1",
    model: "m",
    credentials: "rev1",
    ...over,
  });
  const next = (l: PublishedLine) => ({ route: "chat", mode: "normal" as const, lines: [l] });
  const first = publishTableBy(publishedLineKey, null, next(line()), 1000).table;

  it.each([
    ["a new base URL", { baseUrl: "http://v/v1" }],
    ["a new key (its revision)", { credentials: "rev2" }],
    ["a new model", { model: "m2" }],
  ])("%s is a new version, so routers pull it", (_, over) => {
    expect(publishTableBy(publishedLineKey, first, next(line(over)), 2000)).toMatchObject({ changed: true, table: { version: 2 } });
  });
  it("a state shown differently at the same weight is not", () => {
    expect(publishTableBy(publishedLineKey, first, next(line({ state: "degraded" })), 2000)).toMatchObject({
      changed: false,
      table: first,
    });
  });
  it.each([
    ["unprobed → probation", "unprobed", "probation"],
    ["probation → healthy", "probation", "healthy"],
    ["healthy → probation", "healthy", "probation"],
  ] as const)("a line going %s at the same weight is (new lines judged together keep their shares)", (_, from, to) => {
    const at = publishTableBy(publishedLineKey, null, next(line({ state: from })), 1000).table;
    expect(publishTableBy(publishedLineKey, at, next(line({ state: to })), 2000)).toMatchObject({ changed: true, table: { version: 2 } });
  });
  it("after a stored version it cannot read, the next version follows it", () => {
    const r = publishTableBy(publishedLineKey, 7, next(line()), 2000);
    expect(r.table.version).toBe(8);
    expect(r.effects[0]).toMatchObject({ version: 8, previousVersion: 7 });
  });
});

describe("parsePublishedLines", () => {
  const stored = {
    lineId: "a",
    id: "a",
    weight: 10000,
    name: "n",
    tier: "paid",
    state: "healthy",
    protocol: "openai-chat",
    baseUrl: "u",
    model: "m",
    credentials: "r",
  };
  it("reads what the publisher stores", () => {
    expect(parsePublishedLines([stored])).toEqual([stored]);
  });
  it("reads a line stored without lineId by its id", () => {
    const { lineId: _, ...withoutLineId } = stored;
    expect(parsePublishedLines([withoutLineId])).toEqual([stored]);
  });
  it.each([
    ["not a list", { lines: [] }],
    ["a line without a name", [{ ...stored, name: undefined }]],
    ["a fractional weight", [{ ...stored, weight: 0.5 }]],
    ["a weight over 10000", [{ ...stored, weight: 10001 }]],
    ["another shape", [{ line: "x" }]],
  ])("refuses %s", (_, value) => {
    expect(parsePublishedLines(value)).toBeNull();
  });
});

describe("routeWarnings", () => {
  it.each([
    { members: [], codes: ["no_lines"] },
    { members: [free("f"), free("g")], codes: ["all_free"] },
    { members: [paid("a"), free("f")], codes: [] },
    { members: [paid("a", { maxShare: 0.3 }), paid("b", { maxShare: 0.3 })], codes: ["max_share_unreachable"] },
    { members: [paid("a", { maxShare: 0.5 }), free("f")], codes: ["free_cap_unreachable"] },
    { members: [paid("a", { adminState: "disabled" }), free("f")], codes: ["all_free"] },
  ])("$codes", ({ members, codes }) => {
    expect(routeWarnings(members, { freeShareCap: 0.2 }).map((w) => w.code)).toEqual(codes);
  });
});

describe("computeTable: a route whose lines speak several protocols (docs/tables.md)", () => {
  const chat = (m: TableMember): TableMember => ({ ...m, protocol: "openai-chat" });
  const claude = (m: TableMember): TableMember => ({ ...m, protocol: "anthropic-messages" });

  it("is one table per protocol: each protocol's weights sum to 10000, in member order", () => {
    const members = [chat(paid("c1", { baseWeight: 300 })), claude(paid("a1")), chat(paid("c2")), claude(paid("a2", { baseWeight: 300 }))];
    const t = computeTable({ route, members });
    expect(t.mode).toBe("normal");
    expect(t.lines).toEqual([
      { lineId: "c1", weight: 7500 },
      { lineId: "a1", weight: 2500 },
      { lineId: "c2", weight: 2500 },
      { lineId: "a2", weight: 7500 },
    ]);
  });

  it("keeps the free cap true for each protocol's clients: free Anthropic lines never borrow paid chat lines' share", () => {
    const members = [chat(paid("c1")), chat(free("c2")), claude(paid("a1")), claude(free("a2", { baseWeight: 900 }))];
    const { w } = weights(members);
    expect(w).toEqual({ c1: 8000, c2: 2000, a1: 8000, a2: 2000 });
  });

  it("runs a protocol with only free lines degraded (and the table says degraded) while the other stays capped", () => {
    const members = [chat(paid("c1")), chat(free("c2")), claude(free("a1")), claude(free("a2"))];
    const { mode, w } = weights(members);
    expect(mode).toBe("degraded");
    expect(w).toEqual({ c1: 8000, c2: 2000, a1: 5000, a2: 5000 });
  });

  it("panics one protocol alone: fail-open spreads its lines by base weight; fail-closed leaves it out", () => {
    const members = [chat(paid("c1")), claude(paid("a1", { factor: 0 })), claude(paid("a2", { factor: 0, baseWeight: 300 }))];
    expect(weights(members)).toEqual({ mode: "panic", w: { c1: 10000, a1: 2500, a2: 7500 } });
    expect(weights(members, { ...route, onAllDown: "fail-closed" })).toEqual({ mode: "panic", w: { c1: 10000 } });
  });

  it("is exactly the one-protocol table when every line speaks the same protocol", () => {
    const members = [paid("p1"), free("f1"), paid("p2", { factor: 0.5 })];
    expect(computeTable({ route, members: members.map(chat) })).toEqual(computeTable({ route, members }));
  });
});

describe("routeWarnings per protocol", () => {
  it("warns when one protocol's lines are all free although the route has paid lines", () => {
    const members = [
      { tier: "paid" as const, maxShare: null, protocol: "openai-chat" },
      { tier: "free" as const, maxShare: null, protocol: "anthropic-messages" },
    ];
    const warnings = routeWarnings(members, { freeShareCap: 0.2 });
    expect(warnings.map((w) => w.code)).toEqual(["all_free"]);
    expect(warnings[0]?.message).toContain("anthropic-messages");
    expect(routeWarnings([members[0] as (typeof members)[0], { ...(members[1] as (typeof members)[1]), tier: "paid" }])).toEqual([]);
  });
});
