import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../../apps/cli/src/errors";
import { type Current, canonical, planChanges } from "../../../apps/cli/src/plan";
import { parseRegistryFile, registryToFile } from "../../../apps/cli/src/registry-file";
import type { Line, Route, Sample } from "../../../apps/cli/src/types";

// The planner on its own: a file against a registry (as the API returns it) → the changes, in order.

const at = "2026-11-29T12:00:00.000Z";
const route = (name: string, extra: Partial<Route> = {}): Route => ({
  name,
  freeShareCap: 0.2,
  onAllDown: "fail-open",
  policy: null,
  lines: [],
  warnings: [],
  createdAt: at,
  updatedAt: at,
  ...extra,
});
const line = (name: string, extra: Partial<Line> = {}): Line => ({
  id: `00000000-0000-4000-8000-${name
    .padStart(12, "0")
    .slice(-12)
    .replace(/[^0-9a-f]/g, "0")}`,
  name,
  tier: "paid",
  protocol: "openai-chat",
  baseUrl: "https://up.example/v1",
  model: "m",
  headers: {},
  routes: [{ route: "chat", weight: 100 }],
  probeIntervalSec: 45,
  timeoutMs: null,
  dailyQuota: null,
  probeBudgetPct: 5,
  maxShare: null,
  adminState: "active",
  hasApiKey: false,
  createdAt: at,
  updatedAt: at,
  ...extra,
});
const sample = (name: string, extra: Partial<Sample> = {}): Sample => ({
  id: `10000000-0000-4000-8000-${String(name.length).padStart(12, "0")}`,
  name,
  protocol: "openai-chat",
  routes: [],
  request: { messages: [{ role: "user", content: "hi" }] },
  expect: { minLength: 1 },
  variants: [],
  timeoutMs: null,
  weight: 1,
  source: "api",
  createdAt: at,
  updatedAt: at,
  ...extra,
});

const fileOf = (doc: unknown) => parseRegistryFile(doc, "test.yaml");
const opts = (o: Partial<Parameters<typeof planChanges>[2]> = {}) => ({ prune: false, updateKeys: false, env: () => undefined, ...o });
const summary = (current: Current, doc: unknown, o: Partial<Parameters<typeof planChanges>[2]> = {}) =>
  planChanges(fileOf(doc), current, opts(o)).map(
    (c) => `${c.action} ${c.kind} ${c.name}${c.action === "update" ? ` ${c.changes.map((f) => f.field).join(",")}` : ""}`,
  );

const current: Current = {
  routes: [route("chat"), route("old")],
  lines: [line("a", { hasApiKey: true, adminState: "drained" }), line("b", { routes: [{ route: "old", weight: 1 }] })],
  samples: [sample("s1"), sample("shipped-one", { source: "shipped" })],
};

describe("planChanges", () => {
  it("an exported registry plans no change, with or without --prune", () => {
    const doc = registryToFile(current);
    expect(summary(current, doc)).toEqual([]);
    expect(summary(current, doc, { prune: true })).toEqual([]);
  });

  it("orders creates and updates before deletes, routes first and last", () => {
    const doc = {
      routes: [{ name: "chat" }, { name: "new" }],
      lines: [
        { ...registryToFile(current).lines[0], routes: [{ route: "new", weight: 5 }] },
        { name: "c", tier: "free", protocol: "openai-chat", baseUrl: "https://x.example", model: "m" },
      ],
      samples: [],
    };
    expect(summary(current, doc, { prune: true })).toEqual([
      "create route new",
      "update line a routes",
      "create line c",
      "delete line b",
      "delete sample s1",
      "delete route old",
    ]);
  });

  it("keys: sent to a line without one, never compared otherwise, always with --update-keys", () => {
    const doc = { lines: [{ ...registryToFile(current).lines[0] }, { ...registryToFile(current).lines[1], apiKeyEnv: "B_KEY" }] };
    expect(doc.lines[0]).toMatchObject({ apiKeyEnv: "LINEWATCH_KEY_A" });
    expect(() => summary(current, doc)).toThrow(/lines\[1\]\.apiKeyEnv: the environment variable B_KEY is not set/);
    const env = (n: string) => ({ B_KEY: "kb", LINEWATCH_KEY_A: "ka" })[n];
    const changes = planChanges(fileOf(doc), current, opts({ env }));
    expect(changes).toEqual([expect.objectContaining({ action: "update", name: "b", patch: { apiKey: "kb" } })]);
    expect(JSON.stringify(changes.map((c) => (c.action === "update" ? c.changes : [])))).not.toContain("kb");
    expect(summary(current, doc, { env, updateKeys: true })).toEqual(["update line a apiKey", "update line b apiKey"]);
  });

  it("adminState only when the file gives it; absent optional fields clear the line's", () => {
    const exported = registryToFile(current).lines[0]!;
    const { adminState: _drained, ...noState } = exported as typeof exported & { adminState?: string };
    expect(summary(current, { lines: [noState] })).toEqual([]);
    expect(summary(current, { lines: [{ ...noState, adminState: "active" }] })).toEqual(["update line a adminState"]);
    const withLimits = { ...current, lines: [line("a", { hasApiKey: true, maxShare: 0.5, timeoutMs: 5000 })] };
    expect(summary(withLimits, { lines: [noState] })).toEqual(["update line a timeoutMs,maxShare"]);
  });

  it("compares samples and routes by value, whatever the key order", () => {
    const s = sample("s1", { request: { b: 1, messages: [{ content: "hi", role: "user" }] } });
    const doc = {
      samples: [
        { name: "s1", protocol: "openai-chat", request: { messages: [{ role: "user", content: "hi" }], b: 1 }, expect: { minLength: 1 } },
      ],
    };
    expect(summary({ ...current, samples: [s] }, doc)).toEqual([]);
    expect(canonical({ b: 1, a: { d: 1, c: 2 } })).toBe(canonical({ a: { c: 2, d: 1 }, b: 1 }));
    expect(summary(current, { routes: [{ name: "chat", policy: { holdMs: 1000 } }] })).toEqual(["update route chat policy"]);
  });

  it("never prunes shipped samples, and prunes only the sections the file has", () => {
    expect(summary(current, { samples: [] }, { prune: true })).toEqual(["delete sample s1"]);
    expect(summary(current, {}, { prune: true })).toEqual([]);
  });

  it("refuses references to routes that will not exist", () => {
    const doc = { routes: [{ name: "chat" }], lines: [registryToFile(current).lines[1]] };
    expect(() => summary(current, doc, { prune: true })).toThrow(/lines\[0\]\.routes\[0\]\.route: no route "old"/);
    expect(summary(current, doc)).toEqual([]); // without --prune the route stays
  });
});

describe("parseRegistryFile", () => {
  it("names every bad field", () => {
    try {
      fileOf({
        routes: [{ name: "r", freeShareCap: 2, policy: { bogus: 1 } }],
        lines: [{ name: "x", tier: "cheap", extra: 1 }, "no"],
        samples: [{ name: "s" }],
        other: [],
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInput);
      const fields = (error as InvalidInput).details.map((d) => d.field);
      expect(fields).toEqual(
        expect.arrayContaining([
          "other",
          "routes[0].freeShareCap",
          "lines[0].tier",
          "lines[0].extra",
          "lines[1]",
          "samples[0].request",
          "samples[0].expect",
        ]),
      );
    }
    expect(() => fileOf({ routes: [{ name: "r", policy: { bogus: 1 } }] })).toThrow(/routes\[0\]\.policy\.bogus: unknown threshold/);
    expect(() => fileOf({ routes: [{ name: "r" }, { name: "r" }] })).toThrow(/routes\[1\]\.name: "r" is already used by routes\[0\]/);
  });
});
