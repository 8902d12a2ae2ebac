import { createHash } from "node:crypto";
import {
  computeTable,
  type Health,
  type HealthPolicy,
  linePolicy,
  lineStatus,
  type PublishedLine,
  type PublishedTable,
  publishedLineKey,
  publishTableBy,
  type RouteTable,
  type TableMember,
  toRouteTable,
} from "@linewatch/core";
import {
  canCompressLz4,
  type EventInsert,
  healthChangedSince,
  listPublishedTables,
  lockRoutes,
  publishedTablesNewerThan,
  publishedVersions,
  type StoredTable,
  writePublishedTables,
} from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { CachedLine, CachedRoute, RegistrySnapshot } from "../registry-cache";

export const TABLES_CHANNEL = "linewatch_tables";

/** What a cause of a recompute says in the table_published event. */
export interface PublishCause {
  reason: string;
  probeIds: string[];
}

/**
 * One version of a route's table, ready to answer with: the table endpoint sends these strings as
 * they are, so a 200 or a 304 costs about what a health check does.
 */
export interface ServedTable {
  table: PublishedTable<PublishedLine>;
  /** The wire form, without credentials. */
  view: RouteTable;
  /** `"<version>"`. */
  etag: string;
  /** `view` as JSON, in UTF-8: written as it is, with no string to encode per answer. */
  body: Buffer<ArrayBuffer>;
}

/** Registry-derived facts the publisher needs per snapshot: each route's lines and each line's policy. */
interface SnapshotIndex {
  snapshot: RegistrySnapshot;
  /** Each route's lines by name; a route's list is the same array while none of its lines changed. */
  linesOf: Map<string, CachedLine[]>;
  /** The lines that are on some route, each once. */
  lineIds: string[];
  policyOf: Map<string, HealthPolicy>;
}

/** What a table takes from a line's status; the same object while its inputs stay the same. */
interface LineTableStatus {
  adminState: string;
  policy: HealthPolicy;
  state: string;
  factor: number;
}

/** A line's health as last read, and the status worked out from it (recomputed when an input moves). */
interface HealthEntry {
  revision: number | null;
  health: Health | null;
  status: LineTableStatus | null;
}

/** What a route's served table was computed from. */
interface RouteInputs {
  route: CachedRoute | undefined;
  lines: CachedLine[];
  statuses: LineTableStatus[];
  table: PublishedTable<PublishedLine>;
}

/** The order lines have always been listed in (String#localeCompare's, without its per-call cost). */
const byName = new Intl.Collator();

const sameItems = <T>(a: readonly T[], b: readonly T[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** A route with no lines: one array, so its inputs compare equal. */
const NO_LINES: CachedLine[] = [];

/** By the headers object, which the registry keeps while a line's sealed headers stay the same (a reweighted line keeps it). */
const credentialRevs = new WeakMap<Record<string, string>, { apiKey: string | null; rev: string }>();

/** A revision of the line's key and headers (the table stores this, never the values). */
function credentialsRev(line: CachedLine): string {
  const held = credentialRevs.get(line.headers);
  if (held && held.apiKey === line.apiKey) return held.rev;
  const rev = createHash("sha256")
    .update(JSON.stringify([line.apiKey, line.headers]))
    .digest("hex")
    .slice(0, 16);
  credentialRevs.set(line.headers, { apiKey: line.apiKey, rev });
  return rev;
}

function serve(table: PublishedTable<PublishedLine>): ServedTable {
  const view = toRouteTable(table);
  return { table, view, etag: `"${table.version}"`, body: Buffer.from(JSON.stringify(view)) };
}

/**
 * Computes, versions and serves the routes' tables. The database holds the truth (so every replica
 * serves the same table); each replica keeps a copy in memory for the hot path, refreshed by NOTIFY.
 */
export class TablePublisher {
  private served = new Map<string, ServedTable>();
  /** The credentialed body of a served table, with the registry's lines it was made from (the keys come from them). */
  private credentialed = new WeakMap<
    ServedTable,
    { snapshot: RegistrySnapshot; lines: (CachedLine | undefined)[]; body: Buffer<ArrayBuffer> }
  >();
  private waiters = new Map<string, Set<() => void>>();
  private unlisten: (() => Promise<void>) | null = null;
  private index: SnapshotIndex | null = null;
  /** Policies by the overrides they are made of, kept across snapshots so cached statuses stay valid. */
  private policies = new Map<string, HealthPolicy>();
  private health = new Map<string, HealthEntry>();
  private inputs = new Map<string, RouteInputs>();
  /** Routes announced by NOTIFY and not read yet: a burst of publishes is read in one query. */
  private announced = new Set<string>();
  private reading: Promise<void> | null = null;
  /** Whether new versions go into TOAST with lz4 (see writePublishedTables); found out at start. */
  private lz4 = false;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger">,
    private readonly registry: { get(): Promise<RegistrySnapshot> },
  ) {}

  async start(): Promise<void> {
    this.lz4 = await canCompressLz4(this.deps.database.db);
    this.take(await listPublishedTables(this.deps.database.db));
    this.unlisten = await this.deps.database.listen(
      TABLES_CHANNEL,
      (route) => this.announce(route),
      // Back after the listener lost its connection: another replica may have published meanwhile.
      () => void this.reloadAll(),
    );
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
    for (const set of this.waiters.values()) for (const wake of set) wake();
  }

  /** The table of a route as this replica serves it; null before its first publication. */
  view(route: string): RouteTable | null {
    return this.served.get(route)?.view ?? null;
  }

  /** The served version of a route's table with its prepared answer; null before its first publication. */
  servedTable(route: string): ServedTable | null {
    return this.served.get(route) ?? null;
  }

  allViews(): RouteTable[] {
    return [...this.served.values()].map((s) => s.view).sort((a, b) => a.route.localeCompare(b.route));
  }

  /** The table as a router token gets it: each line with its key and headers from `snapshot`. Built once per version and snapshot. */
  credentialedBody(served: ServedTable, snapshot: RegistrySnapshot): Buffer<ArrayBuffer> {
    const cached = this.credentialed.get(served);
    if (cached?.snapshot === snapshot) return cached.body;
    const lines = served.view.lines.map((l) => snapshot.lines.get(l.id));
    // A new snapshot where this table's lines are the same objects (another route changed): the same body.
    if (cached && sameItems(cached.lines, lines)) {
      cached.snapshot = snapshot;
      return cached.body;
    }
    const body = Buffer.from(JSON.stringify(this.withCredentials(served.view, snapshot)));
    this.credentialed.set(served, { snapshot, lines, body });
    return body;
  }

  withCredentials(view: RouteTable, snapshot: RegistrySnapshot): RouteTable {
    return {
      ...view,
      lines: view.lines.map((l) => {
        const line = snapshot.lines.get(l.id);
        return { ...l, apiKey: line?.apiKey ?? null, headers: line?.headers ?? {} };
      }),
    };
  }

  /** Resolve when the route's version differs from `version`, or after `ms`. */
  waitForChange(route: string, version: number | null, ms: number, signal?: AbortSignal): Promise<void> {
    if ((this.served.get(route)?.table.version ?? null) !== version) return Promise.resolve();
    return new Promise((resolve) => {
      const set = this.waiters.get(route) ?? new Set();
      this.waiters.set(route, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done);
      set.add(done);
    });
  }

  private announce(route: string): void {
    this.announced.add(route);
    if (this.reading) return;
    // After the current turn, so the notifications of one commit are read together.
    this.reading = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.readAnnounced())
      .finally(() => {
        this.reading = null;
        if (this.announced.size > 0) this.announce([...this.announced][0] as string);
      });
  }

  private async readAnnounced(): Promise<void> {
    const routes = [...this.announced];
    this.announced.clear();
    const known = routes.map((route) => ({ route, version: this.served.get(route)?.table.version ?? 0 }));
    try {
      this.take(await publishedTablesNewerThan(this.deps.database.db, known));
    } catch (error) {
      this.deps.logger.warn("cannot reload tables after a notification", { routes, error: String(error) });
    }
  }

  private async reloadAll(): Promise<void> {
    try {
      this.take(await listPublishedTables(this.deps.database.db));
    } catch (error) {
      this.deps.logger.warn("cannot reload the tables after the listener reconnected", { error: String(error) });
    }
  }

  /** Serve what the database holds where it is newer than what this replica serves. */
  private take(stored: StoredTable[]): void {
    for (const s of stored) if (s.table) this.setServed(s.table);
  }

  private setServed(table: PublishedTable<PublishedLine>): void {
    const old = this.served.get(table.route);
    if (old && old.table.version >= table.version) return;
    this.served.set(table.route, serve(table));
    for (const wake of this.waiters.get(table.route) ?? []) wake();
  }

  /** Each route's lines and each line's policy, worked out once per registry snapshot. */
  private indexOf(snapshot: RegistrySnapshot): SnapshotIndex {
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
  ) {
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
      for (const m of line.routes) {
        const list = linesOf.get(m.route);
        if (list) list.push(line);
        else linesOf.set(m.route, [line]);
      }
      policyOf.set(line.id, this.policyFor(line, snapshot, byRouteSet, policies));
    }
    for (const list of linesOf.values()) list.sort((a, b) => byName.compare(a.name, b.name));
    this.policies = policies;
    for (const id of this.health.keys()) if (!snapshot.lines.has(id)) this.health.delete(id);
    return { snapshot, linesOf, lineIds, policyOf };
  }

  /**
   * The index of a snapshot that keeps most of the previous one's line and route objects (the
   * registry's partial reloads): only the routes whose lines or settings changed are listed again.
   * Null when a route's policy overrides changed (the policies of its unchanged lines move too) or
   * most lines changed: then the whole index is worked out again.
   */
  private reindex(held: SnapshotIndex, snapshot: RegistrySnapshot): SnapshotIndex | null {
    const old = held.snapshot;
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
      for (const m of line.routes) {
        if (!affected.has(m.route)) continue;
        const list = linesOf.get(m.route);
        if (list) list.push(line);
        else linesOf.set(m.route, [line]);
      }
    }
    for (const route of affected) linesOf.get(route)?.sort((a, b) => byName.compare(a.name, b.name));
    const byRouteSet = new Map<string, HealthPolicy>();
    for (const line of changed) {
      if (line.routes.length === 0) policyOf.delete(line.id);
      else policyOf.set(line.id, this.policyFor(line, snapshot, byRouteSet, this.policies));
    }
    for (const line of removed) {
      policyOf.delete(line.id);
      this.health.delete(line.id);
    }
    const lineIds = changed.length + removed.length > 0 ? [...policyOf.keys()] : held.lineIds;
    return { snapshot, linesOf, lineIds, policyOf };
  }

  /** Recompute these routes' tables; publish a new version of each one whose content changed. */
  async recompute(routes: Iterable<string>, cause: PublishCause = { reason: "recomputed", probeIds: [] }): Promise<void> {
    const snapshot = await this.registry.get();
    const index = this.indexOf(snapshot);
    const wanted = [...new Set(routes)].filter((r) => snapshot.routes.has(r)).sort();
    if (wanted.length === 0) return;
    const lineIds =
      wanted.length === 1 ? (index.linesOf.get(wanted[0] as string) ?? []).map((l) => l.id) : this.linesOfRoutes(index, wanted);
    const held = new Map<string, HealthEntry>();
    const revisions = lineIds.map((id) => {
      const entry = this.health.get(id);
      if (entry) held.set(id, entry);
      return entry?.revision ?? null;
    });
    const db = this.deps.database.db;
    // One publisher per route at a time (across replicas too), and health read under that lock:
    // a recompute that read older health can never publish after one that read newer health.
    // Nothing changed (the common case): five round trips, no write and little work, whatever the number of routes.
    const outcome = await db.transaction(async (tx) => {
      await lockRoutes(tx, wanted);
      const [versions, changed] = await Promise.all([publishedVersions(tx, wanted), healthChangedSince(tx, { lineIds, revisions })]);
      // Another replica published since this one last heard: serve what it wrote before comparing.
      const behind = wanted.filter((r) => (versions.get(r) ?? 0) > (this.served.get(r)?.table.version ?? 0));
      if (behind.length > 0)
        this.take(
          await publishedTablesNewerThan(
            tx,
            behind.map((route) => ({ route, version: 0 })),
          ),
        );
      const now = this.deps.clock.now();
      const read = new Map<string, HealthEntry>(changed.map((h) => [h.lineId, { revision: h.revision, health: h.health, status: null }]));
      const entryOf = (id: string): HealthEntry => {
        let entry = read.get(id) ?? held.get(id);
        if (!entry) {
          // No row yet (a line never probed): its initial health.
          entry = { revision: null, health: null, status: null };
          read.set(id, entry);
        }
        return entry;
      };
      const tables: PublishedTable<PublishedLine>[] = [];
      const eventRows: EventInsert[] = [];
      const inputs = new Map<string, RouteInputs>();
      for (const route of wanted) {
        const lines = index.linesOf.get(route) ?? NO_LINES;
        const statuses = lines.map((l) => this.statusOf(l, index, entryOf(l.id), now));
        const served = this.served.get(route)?.table;
        const stored = versions.get(route);
        // The served table was computed from these very inputs: nothing to compute or compare.
        const last = this.inputs.get(route);
        const settings = snapshot.routes.get(route);
        if (
          served &&
          served.version === stored &&
          last?.table === served &&
          last.lines === lines &&
          last.route === settings &&
          sameItems(last.statuses, statuses)
        ) {
          continue;
        }
        const next = this.compute(route, snapshot, lines, statuses);
        // A stored version this replica could not read (another shape): the next version follows it.
        const previous = served && served.version === stored ? served : (stored ?? null);
        const result = publishTableBy(publishedLineKey, previous, next, now, cause);
        inputs.set(route, { route: settings, lines, statuses, table: result.table });
        if (!result.changed) continue;
        tables.push(result.table);
        for (const e of result.effects) {
          eventRows.push({
            at: new Date(now),
            kind: e.kind,
            lineId: null,
            routeName: route,
            reason: e.reason,
            data: {
              version: e.version,
              previousVersion: e.previousVersion,
              mode: e.mode,
              probeIds: e.probeIds,
              weights: result.table.lines.map((l) => ({ line: l.name, weight: l.weight })),
            },
            dedupeKey: `table:${route}:${e.version}`,
          });
        }
      }
      await writePublishedTables(tx, tables, eventRows, TABLES_CHANNEL, { lz4: this.lz4 });
      return { tables, inputs, read };
    });
    // Committed: what was read and published is now what this replica holds.
    for (const [id, entry] of outcome.read) this.health.set(id, entry);
    for (const table of outcome.tables) this.setServed(table);
    for (const [route, input] of outcome.inputs) this.inputs.set(route, input);
  }

  /** The lines of these routes, each once. */
  private linesOfRoutes(index: SnapshotIndex, routes: string[]): string[] {
    if (routes.length === index.linesOf.size) return index.lineIds;
    const ids = new Set<string>();
    for (const r of routes) for (const l of index.linesOf.get(r) ?? []) ids.add(l.id);
    return [...ids];
  }

  /** A route's table from the snapshot's lines and their health (as read under the route's lock). */
  private compute(
    route: string,
    snapshot: RegistrySnapshot,
    lines: CachedLine[],
    statuses: LineTableStatus[],
  ): { route: string; mode: PublishedTable["mode"]; lines: PublishedLine[] } {
    const r = snapshot.routes.get(route);
    const members: TableMember[] = lines.map((l, i) => ({
      lineId: l.id,
      name: l.name,
      tier: l.tier,
      baseWeight: l.routes.find((m) => m.route === route)?.weight ?? 0,
      factor: statuses[i]?.factor ?? 0,
      maxShare: l.maxShare,
      adminState: l.adminState,
      protocol: l.protocol,
    }));
    const computed = computeTable({
      route: { name: route, freeShareCap: r?.freeShareCap ?? 0.2, onAllDown: r?.onAllDown ?? "fail-open" },
      members,
    });
    const byId = new Map(lines.map((l, i) => [l.id, { line: l, status: statuses[i] }]));
    return {
      route,
      mode: computed.mode,
      lines: computed.lines.map(({ lineId, weight }) => {
        const found = byId.get(lineId);
        if (!found) throw new Error(`computeTable returned line ${lineId}, which is not a member of route ${route}`);
        const l = found.line;
        return {
          lineId,
          id: lineId,
          weight,
          name: l.name,
          tier: l.tier,
          state: found.status?.state ?? l.adminState,
          protocol: l.protocol,
          baseUrl: l.baseUrl,
          model: l.model,
          credentials: credentialsRev(l),
        };
      }),
    };
  }

  /**
   * One status per line: the admin state (the registry's; health's overlay may lag a moment behind a
   * PATCH) over health. Worked out again only when the health read, the admin state or the policy
   * moved: `now` only dates the initial health of a line never probed, which the state and factor do
   * not depend on.
   */
  private statusOf(line: CachedLine, index: SnapshotIndex, entry: HealthEntry, now: number): LineTableStatus {
    const policy = index.policyOf.get(line.id) ?? linePolicy(line, index.snapshot.routes);
    const held = entry.status;
    if (held && held.adminState === line.adminState && held.policy === policy) return held;
    const s = lineStatus(line.adminState, entry.health, policy, now);
    entry.status = { adminState: line.adminState, policy, state: s.state, factor: s.factor };
    return entry.status;
  }
}
