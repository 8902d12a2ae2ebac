import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY } from "../../../../packages/core/src/health/index";
import {
  mergeReplayRuns,
  PolicyReplay,
  partitionReplay,
  type ReplayLine,
  type ReplayResult,
  type ReplayRoute,
} from "../../../../packages/core/src/replay/index";

const T0 = Date.UTC(2026, 11, 1, 0, 0, 0);
const line = (id: string, ...routes: string[]): ReplayLine => ({
  id,
  name: `line-${id}`,
  tier: "paid",
  adminState: "active",
  maxShare: null,
  routes: routes.map((route) => ({ route, weight: 100 })),
});
const route = (name: string): ReplayRoute => ({ name, freeShareCap: 0.2, onAllDown: "fail-open" });
const names = (parts: { lines: ReplayLine[]; routes: ReplayRoute[] }[]) =>
  parts.map((p) => ({ lines: p.lines.map((l) => l.id).sort(), routes: p.routes.map((r) => r.name) }));

describe("partitionReplay", () => {
  it("keeps lines that share a route, even through another line, in one part", () => {
    const lines = [line("a1", "a"), line("a2", "a"), line("b1", "b"), line("bc", "b", "c"), line("c1", "c"), line("solo")];
    const parts = partitionReplay(lines, ["a", "b", "c"].map(route), 2);
    expect(names(parts)).toEqual([
      { lines: ["b1", "bc", "c1"], routes: ["b", "c"] },
      { lines: ["a1", "a2", "solo"], routes: ["a"] },
    ]);
    // One part when everything is connected, or when one is asked for.
    expect(partitionReplay(lines, ["a", "b", "c"].map(route), 1)).toHaveLength(1);
    expect(partitionReplay([line("x", "a", "b"), line("y", "b")], [route("a"), route("b")], 4)).toHaveLength(1);
  });

  it("gives every line to exactly one part, balanced, whatever the order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 3 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 5 }),
        (memberships, k) => {
          const lines = memberships.map((rs, i) => line(`l${String(i).padStart(2, "0")}`, ...new Set(rs.map((r) => `r${r}`))));
          const routes = Array.from({ length: 8 }, (_, r) => route(`r${r}`));
          const parts = partitionReplay(lines, routes, k);
          expect(parts.length).toBeLessThanOrEqual(k);
          expect(parts.flatMap((p) => p.lines.map((l) => l.id)).sort()).toEqual(lines.map((l) => l.id).sort());
          // No route is in two parts, and each part has every route its lines are on.
          const routeParts = new Map<string, number>();
          parts.forEach((p, i) => {
            for (const l of p.lines)
              for (const m of l.routes) {
                expect(routeParts.get(m.route) ?? i).toBe(i);
                routeParts.set(m.route, i);
                expect(p.routes.map((r) => r.name)).toContain(m.route);
              }
          });
          // The same parts from the lines in another order.
          expect(names(partitionReplay([...lines].reverse(), routes, k))).toEqual(names(parts));
        },
      ),
    );
  });
});

describe("mergeReplayRuns", () => {
  it("gives the single replay's run from the runs of its parts", () => {
    const lines = [line("a1", "a"), line("a2", "a"), line("b1", "b"), line("b2", "b")];
    const routes = [route("a"), route("b")];
    const results: ReplayResult[] = [];
    let n = 0;
    for (let k = 0; k < 240; k++)
      for (const l of lines) {
        // a1 and b2 fail for a while, at different times.
        const bad = (l.id === "a1" && k >= 40 && k < 60) || (l.id === "b2" && k >= 100 && k < 130);
        results.push({
          id: `r${String(n++).padStart(6, "0")}`,
          lineId: l.id,
          sampleId: "s1",
          startedAt: T0 + k * 30_000 + (l.id.charCodeAt(1) % 7) * 1000,
          latencyMs: bad ? 5000 : 600,
          score: bad ? 0 : 92,
          passed: !bad,
          hardFailure: bad,
          components: null,
          failedCheck: false,
          contentLength: 300,
        });
      }
    // A result of a line that is not replayed is skipped either way.
    results.push({ ...(results[10] as ReplayResult), id: "zz", lineId: "gone" });
    results.sort((x, y) => x.startedAt - y.startedAt || (x.id < y.id ? -1 : 1));
    const setup = (ls: ReplayLine[], rs: ReplayRoute[]) => ({
      from: T0,
      to: T0 + 2 * 3_600_000,
      lines: ls,
      routes: rs,
      sampleWeights: new Map<string, number>(),
      policies: new Map(ls.map((l) => [l.id, DEFAULT_HEALTH_POLICY])),
      scoring: null,
      keepPoints: (id: string) => id === "b2",
    });
    const single = new PolicyReplay(setup(lines, routes));
    for (const r of results) single.push(r);
    const whole = single.finish();

    const parts = partitionReplay(lines, routes, 2);
    expect(parts).toHaveLength(2);
    const runs = parts.map((p) => {
      const replay = new PolicyReplay(setup(p.lines, p.routes));
      const ids = new Set(p.lines.map((l) => l.id));
      for (const r of results) if (ids.has(r.lineId)) replay.push(r);
      return replay.finish();
    });
    const merged = mergeReplayRuns(runs, 1);
    const plain = (run: unknown) => JSON.stringify(run, (_k, v) => (v instanceof Map ? [...v].sort(([a], [b]) => (a < b ? -1 : 1)) : v));
    expect(plain(merged)).toBe(plain(whole));
    expect(whole.badEpisodes.map((e) => e.lineId)).toEqual(["a1", "b2"]);
    expect(merged.skipped).toBe(1);
  });
});
