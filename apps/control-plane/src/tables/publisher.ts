import type { RouteTable } from "@linewatch/core";
import type { AppDeps } from "../deps";
import type { RegistrySnapshot } from "../registry-cache";
import { LineStatuses } from "./line-statuses";
import { type ServedTable, ServedTables, withCredentials } from "./served-tables";
import { SnapshotIndexer } from "./snapshot-index";
import { type PublishCause, TableRecompute } from "./table-recompute";
import { TableSync } from "./table-sync";
import { type ClientGone, TableWaiters } from "./table-waiters";

export type { ServedTable } from "./served-tables";
export type { PublishCause } from "./table-recompute";
export { TABLES_CHANNEL } from "./table-sync";
export { type ClientGone, goneWith } from "./table-waiters";

/**
 * Computes, versions and serves the routes' tables. The database holds the truth (so every replica
 * serves the same table); each replica keeps a copy in memory for the hot path, refreshed by NOTIFY.
 *
 * The parts: ServedTables (the versions served, their prepared answers), TableWaiters (long-polls),
 * TableSync (what other replicas publish), TableRecompute (compute and publish, with the registry's
 * SnapshotIndexer and the lines' health in LineStatuses).
 */
export class TablePublisher {
  private readonly waiters = new TableWaiters();
  private readonly served = new ServedTables((route) => this.waiters.wake(route));
  private readonly sync: TableSync;
  private readonly recomputer: TableRecompute;
  /** Each route's lines and each line's policy per registry snapshot (kept up across partial reloads). */
  readonly index: SnapshotIndexer;

  constructor(deps: Pick<AppDeps, "database" | "clock" | "logger">, registry: { get(): Promise<RegistrySnapshot> }) {
    const statuses = new LineStatuses();
    this.index = new SnapshotIndexer(statuses);
    this.sync = new TableSync(deps, this.served);
    this.recomputer = new TableRecompute(deps, registry, this.served, this.index, statuses);
  }

  async start(): Promise<void> {
    await this.recomputer.start();
    await this.sync.start();
  }

  async stop(): Promise<void> {
    await this.sync.stop();
    this.waiters.wakeAll();
  }

  /** The table of a route as this replica serves it; null before its first publication. */
  view(route: string): RouteTable | null {
    return this.served.get(route)?.view ?? null;
  }

  /** The served version of a route's table with its prepared answer; null before its first publication. */
  servedTable(route: string): ServedTable | null {
    return this.served.get(route);
  }

  allViews(): RouteTable[] {
    return this.served.views();
  }

  /** The table as a router token gets it: each line with its key and headers from `snapshot`. Built once per version and snapshot. */
  credentialedBody(served: ServedTable, snapshot: RegistrySnapshot): Buffer<ArrayBuffer> {
    return this.served.credentialedBody(served, snapshot);
  }

  withCredentials(view: RouteTable, snapshot: RegistrySnapshot): RouteTable {
    return withCredentials(view, snapshot);
  }

  /** Resolve when the route's version differs from `version`, or after `ms`. */
  waitForChange(route: string, version: number | null, ms: number, gone?: ClientGone): Promise<void> {
    if (this.served.version(route) !== version) return Promise.resolve();
    return this.waiters.wait(route, ms, gone);
  }

  /** Long-polls waiting on the route's next version now. */
  waiting(route: string): number {
    return this.waiters.count(route);
  }

  /** Recompute these routes' tables; publish a new version of each one whose content changed. */
  recompute(routes: Iterable<string>, cause: PublishCause = { reason: "recomputed", probeIds: [] }): Promise<void> {
    return this.recomputer.run(routes, cause);
  }
}
