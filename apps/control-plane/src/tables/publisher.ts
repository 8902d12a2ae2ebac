import { createHash } from "node:crypto";
import { type ComputedTable, computeTable, linePolicy, lineStatus, type TableMember, type TableMode } from "@linewatch/core";
import {
  type Db,
  getPublishedTable,
  healthOfLines,
  insertEvents,
  listPublishedTables,
  lockRoute,
  type PublishedTableRow,
  upsertPublishedTable,
} from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { CachedLine, RegistryCache } from "../registry-cache";

export const TABLES_CHANNEL = "linewatch_tables";

/** A line as a table lists it (SPEC §3). Credentials are added per request, for router tokens only. */
export interface TableLineView {
  id: string;
  name: string;
  tier: string;
  state: string;
  weight: number;
  protocol: string;
  baseUrl: string;
  model: string;
}

export interface TableView {
  route: string;
  version: number;
  generatedAt: string;
  mode: TableMode;
  lines: TableLineView[];
}

interface StoredLine extends TableLineView {
  lineId: string;
  /** Changes when the line's key or headers change, so routers re-pull credentials. */
  credentials: string;
}

const credentialsRev = (line: CachedLine) =>
  createHash("sha256")
    .update(JSON.stringify([line.apiKey, line.headers]))
    .digest("hex")
    .slice(0, 16);

/** Identity of what a router acts on: weights plus how to reach each line. */
const contentKey = (mode: string, lines: StoredLine[]) =>
  JSON.stringify([
    mode,
    [...lines]
      .sort((a, b) => a.lineId.localeCompare(b.lineId))
      .map((l) => [l.lineId, l.weight, l.name, l.tier, l.protocol, l.baseUrl, l.model, l.credentials]),
  ]);

function toView(row: PublishedTableRow): TableView {
  return {
    route: row.routeName,
    version: row.version,
    generatedAt: row.generatedAt.toISOString(),
    mode: row.mode as TableMode,
    lines: (row.lines as unknown as StoredLine[]).map(({ id, name, tier, state, weight, protocol, baseUrl, model }) => ({
      id,
      name,
      tier,
      state,
      weight,
      protocol,
      baseUrl,
      model,
    })),
  };
}

/**
 * Computes, versions and serves the routes' tables. The database holds the truth (so every replica
 * serves the same table); each replica keeps a copy in memory for the hot path, refreshed by NOTIFY.
 */
export class TablePublisher {
  private views = new Map<string, TableView>();
  private waiters = new Map<string, Set<() => void>>();
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger">,
    private readonly registry: RegistryCache,
  ) {}

  async start(): Promise<void> {
    for (const row of await listPublishedTables(this.deps.database.db)) this.views.set(row.routeName, toView(row));
    this.unlisten = await this.deps.database.listen(
      TABLES_CHANNEL,
      (route) => void this.reload(route),
      // Back after the listener lost its connection: another replica may have published meanwhile.
      () => void this.reloadAll(),
    );
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
    for (const set of this.waiters.values()) for (const wake of set) wake();
  }

  /** The table of a route as this replica serves it; null before its first publication. */
  view(route: string): TableView | null {
    return this.views.get(route) ?? null;
  }

  allViews(): TableView[] {
    return [...this.views.values()].sort((a, b) => a.route.localeCompare(b.route));
  }

  /** Resolve when the route's version differs from `version`, or after `ms`. */
  waitForChange(route: string, version: number | null, ms: number, signal?: AbortSignal): Promise<void> {
    if ((this.views.get(route)?.version ?? null) !== version) return Promise.resolve();
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

  private async reload(route: string): Promise<void> {
    try {
      const row = await getPublishedTable(this.deps.database.db, route);
      if (row) this.setView(toView(row));
    } catch (error) {
      this.deps.logger.warn("cannot reload a table after a notification", { route, error: String(error) });
    }
  }

  private async reloadAll(): Promise<void> {
    try {
      for (const row of await listPublishedTables(this.deps.database.db)) this.setView(toView(row));
    } catch (error) {
      this.deps.logger.warn("cannot reload the tables after the listener reconnected", { error: String(error) });
    }
  }

  private setView(view: TableView): void {
    const old = this.views.get(view.route);
    if (old && old.version >= view.version) return;
    this.views.set(view.route, view);
    for (const wake of this.waiters.get(view.route) ?? []) wake();
  }

  /** Recompute these routes' tables; publish a new version of each one whose content changed. */
  async recompute(
    routes: Iterable<string>,
    cause: { reason: string; probeIds: string[] } = { reason: "recomputed", probeIds: [] },
  ): Promise<void> {
    for (const route of [...new Set(routes)].sort()) await this.recomputeRoute(route, cause);
  }

  private async recomputeRoute(route: string, cause: { reason: string; probeIds: string[] }): Promise<void> {
    const snapshot = await this.registry.get();
    const r = snapshot.routes.get(route);
    if (!r) return;
    const lines = [...snapshot.lines.values()]
      .filter((l) => l.routes.some((m) => m.route === route))
      .sort((a, b) => a.name.localeCompare(b.name));
    const db = this.deps.database.db;
    // One publisher per route at a time (across replicas too), and health read under that lock:
    // a recompute that read older health can never publish after one that read newer health.
    const published = await db.transaction(async (txRaw) => {
      const tx = txRaw as unknown as Db;
      await lockRoute(tx, route);
      const now = this.deps.clock.now();
      const healthRows = await healthOfLines(
        tx,
        lines.map((l) => l.id),
      );
      const health = new Map(healthRows.map((h) => [h.lineId, h.health]));
      // One status per line: the admin state (the registry's; health's overlay may lag a moment behind a PATCH) over health.
      const statusOf = new Map(
        lines.map((l) => [l.id, lineStatus(l.adminState, health.get(l.id) ?? null, linePolicy(l, snapshot.routes), now)]),
      );
      const members: TableMember[] = lines.map((l) => ({
        lineId: l.id,
        name: l.name,
        tier: l.tier,
        baseWeight: l.routes.find((m) => m.route === route)?.weight ?? 0,
        factor: statusOf.get(l.id)?.factor ?? 0,
        maxShare: l.maxShare,
        adminState: l.adminState,
      }));
      const computed: ComputedTable = computeTable({
        route: { name: route, freeShareCap: r.freeShareCap, onAllDown: r.onAllDown },
        members,
      });
      const byId = new Map(lines.map((l) => [l.id, l]));
      const stored: StoredLine[] = computed.lines.map(({ lineId, weight }) => {
        const l = byId.get(lineId);
        if (!l) throw new Error(`computeTable returned line ${lineId}, which is not a member of route ${route}`);
        const state = statusOf.get(l.id)?.state ?? l.adminState;
        return {
          lineId,
          id: lineId,
          weight,
          name: l.name,
          tier: l.tier,
          state,
          protocol: l.protocol,
          baseUrl: l.baseUrl,
          model: l.model,
          credentials: credentialsRev(l),
        };
      });
      const prevRow = await getPublishedTable(tx, route);
      if (prevRow && contentKey(prevRow.mode, prevRow.lines as unknown as StoredLine[]) === contentKey(computed.mode, stored)) return null;
      // Versions are per route and monotonic; the row outlives a deleted route, so they never repeat.
      const version = (prevRow?.version ?? 0) + 1;
      const row: PublishedTableRow = { routeName: route, version, generatedAt: new Date(now), mode: computed.mode, lines: stored as never };
      await upsertPublishedTable(tx, row);
      await insertEvents(tx, [
        {
          at: new Date(now),
          kind: "table_published",
          lineId: null,
          routeName: route,
          reason: cause.reason,
          data: {
            version,
            previousVersion: prevRow?.version ?? null,
            mode: computed.mode,
            probeIds: cause.probeIds,
            weights: stored.map((l) => ({ line: l.name, weight: l.weight })),
          },
          dedupeKey: `table:${route}:${version}`,
        },
      ]);
      return row;
    });
    if (!published) return;
    this.setView(toView(published));
    await this.deps.database
      .notify(TABLES_CHANNEL, route)
      .catch((error: unknown) => this.deps.logger.warn("notify failed", { error: String(error) }));
  }
}
