// A replay split into parts that can run apart (in worker threads): a line's health depends only on
// its own results, and a route's table only on its own lines, so lines that share no route (even
// through other lines) never meet. Each part is a set of whole route-connected groups; run one
// PolicyReplay per part and merge the runs, and the report is the one a single replay gives.
import { BadEpisodeTracker } from "./bad-episodes";
import type { ReplayRun } from "./policy-replay";
import type { ReplayLine, ReplayRoute, TimelineSummary } from "./timeline";

export interface ReplayPart {
  lines: ReplayLine[];
  routes: ReplayRoute[];
}

/**
 * At most `parts` parts of about the same number of lines, each a union of route-connected groups.
 * Deterministic: the same lines and routes give the same parts, whatever their order.
 */
export function partitionReplay(lines: readonly ReplayLine[], routes: readonly ReplayRoute[], parts: number): ReplayPart[] {
  const sorted = [...lines].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // Union-find over lines, joined through the first line seen on each route.
  const parent = sorted.map((_, i) => i);
  const find = (i: number): number => {
    let root = i;
    while (parent[root] !== root) root = parent[root] as number;
    for (let j = i; parent[j] !== root; ) {
      const next = parent[j] as number;
      parent[j] = root;
      j = next;
    }
    return root;
  };
  const firstOn = new Map<string, number>();
  sorted.forEach((line, i) => {
    for (const m of line.routes) {
      const first = firstOn.get(m.route);
      if (first === undefined) firstOn.set(m.route, i);
      else {
        const a = find(first);
        const b = find(i);
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    }
  });
  const groups = new Map<number, ReplayLine[]>();
  sorted.forEach((line, i) => {
    const root = find(i);
    const group = groups.get(root);
    if (group) group.push(line);
    else groups.set(root, [line]);
  });
  // Largest group first into the part with the fewest lines (ties: the earlier part).
  const ordered = [...groups.values()].sort((a, b) => b.length - a.length || ((a[0]?.id ?? "") < (b[0]?.id ?? "") ? -1 : 1));
  const n = Math.max(1, Math.min(Math.floor(parts), ordered.length));
  const bins: ReplayLine[][] = Array.from({ length: n }, () => []);
  for (const group of ordered) {
    let least = 0;
    for (let i = 1; i < n; i++) if ((bins[i] as ReplayLine[]).length < (bins[least] as ReplayLine[]).length) least = i;
    (bins[least] as ReplayLine[]).push(...group);
  }
  return bins
    .filter((b) => b.length > 0)
    .map((b) => {
      const names = new Set(b.flatMap((l) => l.routes.map((m) => m.route)));
      return { lines: b, routes: routes.filter((r) => names.has(r.name)) };
    });
}

/** The runs of a partitioned replay as one run: what a single replay over every part gives. */
export function mergeReplayRuns(runs: readonly ReplayRun[], skippedOutside = 0): ReplayRun {
  const summary: TimelineSummary = { lines: new Map(), routes: new Map(), factors: new Map(), shares: new Map(), points: new Map() };
  const keys = ["lines", "routes", "factors", "shares", "points"] as const;
  for (const run of runs)
    for (const key of keys) for (const [k, v] of run.summary[key] as Map<string, never>) (summary[key] as Map<string, never>).set(k, v);
  return {
    summary,
    badEpisodes: BadEpisodeTracker.sortEpisodes(runs.flatMap((r) => r.badEpisodes)),
    results: runs.reduce((a, r) => a + r.results, 0),
    skipped: runs.reduce((a, r) => a + r.skipped, skippedOutside),
  };
}
