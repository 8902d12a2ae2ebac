// The published tables as the API serves them (docs/tables.md): every route's, or one route's as a
// prepared answer — the same for the Hono route and the listener that answers before Hono. Credentials
// go only to a router token (docs/roles.md).
import type { RouteTable } from "@linewatch/core";
import type { Engine } from "../engine";
import { NotFoundError } from "../errors";
import type { RegistrySnapshot } from "../registry-cache";
import type { ClientGone, ServedTable } from "../tables/publisher";

/** What `GET /v1/tables/:route` answers once the route has a served table. */
export type TableAnswer =
  | { status: 200; headers: Record<string, string>; body: Buffer<ArrayBuffer> }
  | { status: 304; headers: Record<string, string>; body: null };

/** A route's served table with the registry it was checked against. */
export interface ServedNow {
  served: ServedTable;
  snapshot: RegistrySnapshot;
}

export interface TableRequest {
  /** The principal holds a router token: the body carries each line's credentials. */
  router: boolean;
  ifNoneMatch: string | undefined;
}

/** Whether `If-None-Match` (`"42"`, W/"42", or a list) names this version. */
export function namesVersion(header: string | undefined, served: ServedTable): boolean {
  if (!header) return false;
  if (header === served.etag) return true; // what routers send: the ETag they were given
  // Another single ETag (a router one version behind, thousands at once after a restart): no list to split.
  if (header.charCodeAt(0) === 0x22 && header.indexOf('"', 1) === header.length - 1) return false;
  const version = String(served.table.version);
  return header.split(",").some((t) => t.trim().replace(/^W\//, "").replace(/^"|"$/g, "") === version);
}

export class TableService {
  constructor(private readonly engine: Engine) {}

  /** Every route's table (of the routes that exist now), with credentials for a router. */
  async list(router: boolean): Promise<RouteTable[]> {
    const snapshot = await this.engine.registry.get();
    const { publisher } = this.engine;
    return publisher
      .allViews()
      .filter((v) => snapshot.routes.has(v.route))
      .map((v) => (router ? publisher.withCredentials(v, snapshot) : v));
  }

  /** The registry the tables are checked against (the promise itself: the listener awaits it once). */
  snapshot(): Promise<RegistrySnapshot> {
    return this.engine.registry.get();
  }

  /** The registry when it is fresh, in this turn; undefined when snapshot() must be awaited. */
  snapshotNow(): RegistrySnapshot | undefined {
    return this.engine.registry.now();
  }

  /** The route's served table in this registry, or null when the route is unknown or has none yet (nothing is computed). */
  servedIn(snapshot: RegistrySnapshot, route: string): ServedNow | null {
    if (!snapshot.routes.has(route)) return null;
    const served = this.engine.publisher.servedTable(route);
    return served ? { served, snapshot } : null;
  }

  /** The route's served table; a route's first request computes it. 404 for a route that does not exist. */
  async served(route: string): Promise<ServedNow> {
    const snapshot = await this.engine.registry.get();
    if (!snapshot.routes.has(route)) throw new NotFoundError(`route ${JSON.stringify(route)}`);
    let served = this.engine.publisher.servedTable(route);
    if (!served) {
      await this.engine.publisher.recompute([route], { reason: "first request", probeIds: [] });
      served = this.engine.publisher.servedTable(route);
      if (!served) throw new NotFoundError(`table of route ${JSON.stringify(route)}`);
    }
    return { served, snapshot };
  }

  /**
   * The answer for a route's served table: a 304 when `If-None-Match` names its version (after waiting
   * up to `waitSec` for a newer one), else the body the principal gets.
   */
  async answer(
    route: string,
    first: ServedNow,
    request: TableRequest & { waitSec: number | undefined; gone?: ClientGone | undefined },
  ): Promise<TableAnswer> {
    if (!request.waitSec || !namesVersion(request.ifNoneMatch, first.served)) return this.answerNow(first, request);
    const { publisher } = this.engine;
    await publisher.waitForChange(route, first.served.table.version, request.waitSec * 1000, request.gone);
    const served = publisher.servedTable(route) ?? first.served;
    return this.answerNow({ served, snapshot: await this.engine.registry.get() }, request);
  }

  /** The answer for this version of the table, without waiting for a newer one (in the same turn: no await). */
  answerNow({ served, snapshot }: ServedNow, request: TableRequest): TableAnswer {
    if (namesVersion(request.ifNoneMatch, served))
      return { status: 304, headers: { etag: served.etag, "cache-control": "no-cache" }, body: null };
    return {
      status: 200,
      headers: { etag: served.etag, "cache-control": "no-cache", "content-type": "application/json" },
      body: request.router ? this.engine.publisher.credentialedBody(served, snapshot) : served.body,
    };
  }
}
