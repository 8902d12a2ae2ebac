import { type HealthPolicy, linePolicy } from "@linewatch/core";
import type { CachedLine, RegistrySnapshot } from "../registry-cache";

/** Registry-derived facts the publisher needs per snapshot: each route's lines and each line's policy. */
export interface SnapshotIndex {
  snapshot: RegistrySnapshot;
  /** Each route's lines by name; a route's list is the same array while none of its lines changed. */
  linesOf: Map<string, CachedLine[]>;
  /** The lines that are on some route, each once. */
  lineIds: string[];
  policyOf: Map<string, HealthPolicy>;
}

/** What is told of lines that left the registry, so what it holds of them goes too. */
export interface LinesGone {
  /** A whole index was built: keep only the lines of this snapshot. */
  retain(lines: ReadonlyMap<string, unknown>): void;
  forget(lineId: string): void;
}

/** The order lines have always been listed in (String#localeCompare's, without its per-call cost). */
const byName = new Intl.Collator();

const sortByName = (list: CachedLine[]) => list.sort((a, b) => byName.compare(a.name, b.name));

function addTo(linesOf: Map<string, CachedLine[]>, route: string, line: CachedLine): void {
  const list = linesOf.get(route);
  if (list) list.push(line);
  else linesOf.set(route, [line]);
}

/**
 * Each route's lines and each line's policy, worked out once per registry snapshot. A snapshot that
 * keeps most of the previous one's objects (the registry's partial reloads) is indexed from the
 * previous index: only the routes whose lines or settings changed are listed again.
 */
export class SnapshotIndexer {
  private index: SnapshotIndex | null = null;
  /** Policies by the overrides they are made of, kept across snapshots so cached statuses stay valid. */
  private policies = new Map<string, HealthPolicy>();

  constructor(private readonly gone: LinesGone) {}

  of(snapshot: RegistrySnapshot): SnapshotIndex {
    const held = this.index;
    if (held?.snapshot === snapshot) return held;
    this.index = (held && this.reindex(held, snapshot)) ?? this.fullIndex(snapshot);
    return this.index;
  }

  /**
   * A line's policy is made of the overrides of its routes: lines on the same routes share one, and
   * it is kept across snapshots while those overrides stay the same (so cached statuses stay valid).
   */
  private policyFor(
    line: CachedLine,
    snapshot: RegistrySnapshot,
    byRouteSet: Map<string, HealthPolicy>,
    policies: Map<string, HealthPolicy>,
  ): HealthPolicy {
    const names =
      line.routes.length === 1
        ? (line.routes[0]?.route ?? "")
        : line.routes
            .map((m) => m.route)
            .sort()
            .join("\n");
    let policy = byRouteSet.get(names);
    if (!policy) {
      const key = JSON.stringify(names.split("\n").map((n) => snapshot.routes.get(n)?.policy ?? null));
      policy = policies.get(key) ?? this.policies.get(key) ?? linePolicy(line, snapshot.routes);
      policies.set(key, policy);
      byRouteSet.set(names, policy);
    }
    return policy;
  }

  private fullIndex(snapshot: RegistrySnapshot): SnapshotIndex {
    const linesOf = new Map<string, CachedLine[]>();
    const lineIds: string[] = [];
    const policyOf = new Map<string, HealthPolicy>();
    const byRouteSet = new Map<string, HealthPolicy>();
    const policies = new Map<string, HealthPolicy>();
    for (const line of snapshot.lines.values()) {
      if (line.routes.length === 0) continue;
      lineIds.push(line.id);
      for (const m of line.routes) addTo(linesOf, m.route, line);
      policyOf.set(line.id, this.policyFor(line, snapshot, byRouteSet, policies));
    }
    for (const list of linesOf.values()) sortByName(list);
    this.policies = policies;
    this.gone.retain(snapshot.lines);
    return { snapshot, linesOf, lineIds, policyOf };
  }

  /**
   * The index of a snapshot from the previous one's. Null when a route's policy overrides changed (the
   * policies of its unchanged lines move too) or most lines changed: then the whole index is worked out again.
   */
  private reindex(held: SnapshotIndex, snapshot: RegistrySnapshot): SnapshotIndex | null {
    const diff = diffSnapshots(held.snapshot, snapshot);
    if (!diff) return null;
    const { affected, changed, removed } = diff;
    const linesOf = new Map(held.linesOf);
    const policyOf = new Map(held.policyOf);
    const candidates = new Set<string>(changed.map((l) => l.id));
    for (const route of affected) {
      for (const l of held.linesOf.get(route) ?? []) candidates.add(l.id);
      linesOf.delete(route);
    }
    for (const id of candidates) {
      const line = snapshot.lines.get(id);
      if (!line) continue;
      for (const m of line.routes) if (affected.has(m.route)) addTo(linesOf, m.route, line);
    }
    for (const route of affected) {
      const list = linesOf.get(route);
      if (list) sortByName(list);
    }
    const byRouteSet = new Map<string, HealthPolicy>();
    for (const line of changed) {
      if (line.routes.length === 0) policyOf.delete(line.id);
      else policyOf.set(line.id, this.policyFor(line, snapshot, byRouteSet, this.policies));
    }
    for (const line of removed) {
      policyOf.delete(line.id);
      this.gone.forget(line.id);
    }
    const lineIds = changed.length + removed.length > 0 ? [...policyOf.keys()] : held.lineIds;
    return { snapshot, linesOf, lineIds, policyOf };
  }
}

/**
 * What changed from `old` to `snapshot`: the lines that are new or different objects, the lines that
 * are gone, and the routes either touches (or whose settings changed). Null when a route's policy
 * overrides changed or more than a quarter of the lines (at least 100) changed.
 */
function diffSnapshots(
  old: RegistrySnapshot,
  snapshot: RegistrySnapshot,
): { affected: Set<string>; changed: CachedLine[]; removed: CachedLine[] } | null {
  const affected = new Set<string>();
  for (const [name, route] of snapshot.routes) {
    const was = old.routes.get(name);
    if (was === route) continue;
    if (was && JSON.stringify(was.policy) !== JSON.stringify(route.policy)) return null;
    affected.add(name);
  }
  for (const name of old.routes.keys()) if (!snapshot.routes.has(name)) affected.add(name);
  const changed: CachedLine[] = [];
  const most = Math.max(100, snapshot.lines.size / 4);
  let added = 0;
  for (const [id, line] of snapshot.lines) {
    const was = old.lines.get(id);
    if (was === line) continue;
    if (changed.push(line) > most) return null;
    if (!was) added++;
    for (const m of was?.routes ?? []) affected.add(m.route);
    for (const m of line.routes) affected.add(m.route);
  }
  const removed: CachedLine[] = [];
  if (snapshot.lines.size !== old.lines.size + added) {
    for (const [id, was] of old.lines) {
      if (snapshot.lines.has(id)) continue;
      removed.push(was);
      for (const m of was.routes) affected.add(m.route);
    }
  }
  if (changed.length + removed.length > most) return null;
  return { affected, changed, removed };
}
