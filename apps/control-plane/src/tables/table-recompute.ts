import {
  type PublishedLine,
  type PublishedTable,
  type PublishResult,
  publishedLineKey,
  publishTableBy,
  type TableMode,
} from "@linewatch/core";
import {
  canCompressLz4,
  type Db,
  type EventInsert,
  healthChangedSince,
  lockRoutes,
  publishedTablesNewerThan,
  publishedVersions,
  writePublishedTables,
} from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { CachedLine, CachedRoute, RegistrySnapshot } from "../registry-cache";
import { computeRouteTable } from "./compute-route-table";
import { HealthRead, type LineStatuses, type LineTableStatus, tableStatusOf } from "./line-statuses";
import type { ServedTables } from "./served-tables";
import type { SnapshotIndex, SnapshotIndexer } from "./snapshot-index";
import { TABLES_CHANNEL } from "./table-sync";

/** What a cause of a recompute says in the table_published event. */
export interface PublishCause {
  reason: string;
  probeIds: string[];
}

/** What a route's served table was computed from. */
interface RouteInputs {
  route: CachedRoute;
  lines: CachedLine[];
  statuses: LineTableStatus[];
  table: PublishedTable<PublishedLine>;
}

/** What a recompute's transaction publishes, and what it read and computed (held once it commits). */
interface Planned {
  tables: PublishedTable<PublishedLine>[];
  /** Each new table's previous version where it is the stored row (the write sends only what changed). */
  previous: Map<string, PublishedTable<PublishedLine>>;
  eventRows: EventInsert[];
  inputs: Map<string, RouteInputs>;
}

/** A route with no lines: one array, so its inputs compare equal. */
const NO_LINES: CachedLine[] = [];

const sameItems = <T>(a: readonly T[], b: readonly T[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The table_published events of a route's new version, as timeline rows. `previousMode` (null when
 * the previous version could not be read) lets a reader tell a mode change (docs/alerts.md#webhooks).
 */
function publishedEventRows(
  route: string,
  result: PublishResult<PublishedLine>,
  now: number,
  previousMode: TableMode | null,
): EventInsert[] {
  return result.effects.map((e) => ({
    at: new Date(now),
    kind: e.kind,
    lineId: null,
    routeName: route,
    reason: e.reason,
    data: {
      version: e.version,
      previousVersion: e.previousVersion,
      mode: e.mode,
      previousMode,
      probeIds: e.probeIds,
      weights: result.table.lines.map((l) => ({ line: l.name, weight: l.weight })),
    },
    dedupeKey: `table:${route}:${e.version}`,
  }));
}

/**
 * The compute-and-publish step: reads the routes' lines and health, computes their tables and
 * writes a new version of each one whose content changed. The database holds the truth (so every
 * replica serves the same table); what is published here is served at once once it commits.
 */
export class TableRecompute {
  /** Whether new versions go into TOAST with lz4 (see writePublishedTables); found out at start. */
  private lz4 = false;
  private readonly inputs = new Map<string, RouteInputs>();

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock">,
    private readonly registry: { get(): Promise<RegistrySnapshot> },
    private readonly served: ServedTables,
    private readonly index: SnapshotIndexer,
    private readonly statuses: LineStatuses,
  ) {}

  async start(): Promise<void> {
    this.lz4 = await canCompressLz4(this.deps.database.db);
  }

  /** Recompute these routes' tables; publish a new version of each one whose content changed. */
  async run(routes: Iterable<string>, cause: PublishCause): Promise<void> {
    const snapshot = await this.registry.get();
    const index = this.index.of(snapshot);
    const wanted = [...new Set(routes)].filter((r) => snapshot.routes.has(r)).sort();
    if (wanted.length === 0) return;
    const lineIds = wanted.length === 1 ? (index.linesOf.get(wanted[0] as string) ?? []).map((l) => l.id) : linesOfRoutes(index, wanted);
    const held = this.statuses.held(lineIds);
    // One publisher per route at a time (across replicas too), and health read under that lock:
    // a recompute that read older health can never publish after one that read newer health.
    // Nothing changed (the common case): five round trips, no write and little work, whatever the number of routes.
    const outcome = await this.deps.database.db.transaction(async (tx) => {
      await lockRoutes(tx, wanted);
      const [versions, changed] = await Promise.all([
        publishedVersions(tx, wanted),
        healthChangedSince(tx, { lineIds, revisions: held.revisions }),
      ]);
      await this.catchUp(tx, wanted, versions);
      const read = new HealthRead(changed, held.entries);
      const planned = this.plan(wanted, index, versions, read, cause);
      await writePublishedTables(tx, planned.tables, planned.eventRows, TABLES_CHANNEL, { lz4: this.lz4, previous: planned.previous });
      return { ...planned, read };
    });
    // Committed: what was read and published is now what this replica holds.
    this.statuses.keep(outcome.read);
    for (const table of outcome.tables) this.served.offer(table);
    for (const [route, input] of outcome.inputs) this.inputs.set(route, input);
  }

  /** Another replica published since this one last heard: serve what it wrote before comparing. */
  private async catchUp(tx: Db, routes: string[], versions: Map<string, number>): Promise<void> {
    const behind = routes.filter((r) => (versions.get(r) ?? 0) > (this.served.version(r) ?? 0));
    if (behind.length === 0) return;
    const known = behind.map((route) => ({ route, version: 0 }));
    this.served.take(await publishedTablesNewerThan(tx, known));
  }

  /** Each route's next table where it changed, with its events; `versions` are the stored ones, read under the lock. */
  private plan(routes: string[], index: SnapshotIndex, versions: Map<string, number>, read: HealthRead, cause: PublishCause): Planned {
    const now = this.deps.clock.now();
    const planned: Planned = { tables: [], previous: new Map(), eventRows: [], inputs: new Map() };
    for (const name of routes) {
      const route = index.snapshot.routes.get(name);
      if (!route) continue; // run() keeps only the snapshot's routes
      const lines = index.linesOf.get(name) ?? NO_LINES;
      const statuses = lines.map((l) => tableStatusOf(l, index, read.entryOf(l.id), now));
      const served = this.served.get(name)?.table;
      const stored = versions.get(name);
      // The served table was computed from these very inputs: nothing to compute or compare.
      const last = this.inputs.get(name);
      if (
        served &&
        served.version === stored &&
        last?.table === served &&
        last.lines === lines &&
        last.route === route &&
        sameItems(last.statuses, statuses)
      ) {
        continue;
      }
      const next = computeRouteTable(route, lines, statuses);
      // A stored version this replica could not read (another shape): the next version follows it.
      const previous = served && served.version === stored ? served : (stored ?? null);
      const result = publishTableBy(publishedLineKey, previous, next, now, cause);
      planned.inputs.set(name, { route, lines, statuses, table: result.table });
      if (!result.changed) continue;
      planned.tables.push(result.table);
      if (typeof previous === "object" && previous) planned.previous.set(name, previous);
      planned.eventRows.push(...publishedEventRows(name, result, now, typeof previous === "object" && previous ? previous.mode : null));
    }
    return planned;
  }
}

/** The lines of these routes, each once. */
function linesOfRoutes(index: SnapshotIndex, routes: string[]): string[] {
  if (routes.length === index.linesOf.size) return index.lineIds;
  const ids = new Set<string>();
  for (const r of routes) for (const l of index.linesOf.get(r) ?? []) ids.add(l.id);
  return [...ids];
}
