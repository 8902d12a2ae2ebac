import type { PublishedLine, PublishedTable, RouteTable } from "@linewatch/core";
import { toRouteTable } from "@linewatch/core";
import type { StoredTable } from "@linewatch/db";
import type { CachedLine, RegistrySnapshot } from "../registry-cache";

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

const sameItems = <T>(a: readonly T[], b: readonly T[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

function serve(table: PublishedTable<PublishedLine>): ServedTable {
  const view = toRouteTable(table);
  return { table, view, etag: `"${table.version}"`, body: Buffer.from(JSON.stringify(view)) };
}

/**
 * The tables this replica serves, one version per route, each with its answer prepared. A version
 * only ever replaces an older one; `onNewer` hears of each route that got a newer version.
 */
export class ServedTables {
  private readonly served = new Map<string, ServedTable>();
  /** The credentialed body of a served table, with the registry's lines it was made from (the keys come from them). */
  private readonly credentialed = new WeakMap<
    ServedTable,
    { snapshot: RegistrySnapshot; lines: (CachedLine | undefined)[]; body: Buffer<ArrayBuffer> }
  >();

  constructor(private readonly onNewer: (route: string) => void) {}

  /** The served version of a route's table with its prepared answer; null before its first publication. */
  get(route: string): ServedTable | null {
    return this.served.get(route) ?? null;
  }

  /** The served version of a route's table; null before its first publication. */
  version(route: string): number | null {
    return this.served.get(route)?.table.version ?? null;
  }

  /** Every served table's wire form, by route name. */
  views(): RouteTable[] {
    return [...this.served.values()].map((s) => s.view).sort((a, b) => a.route.localeCompare(b.route));
  }

  /** Serve `table` if it is newer than the route's served version. */
  offer(table: PublishedTable<PublishedLine>): void {
    const old = this.served.get(table.route);
    if (old && old.table.version >= table.version) return;
    this.served.set(table.route, serve(table));
    this.onNewer(table.route);
  }

  /** Serve what the database holds where it is newer than what this replica serves. */
  take(stored: StoredTable[]): void {
    for (const s of stored) if (s.table) this.offer(s.table);
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
    const body = Buffer.from(JSON.stringify(withCredentials(served.view, snapshot)));
    this.credentialed.set(served, { snapshot, lines, body });
    return body;
  }
}

/** A table's wire form with each line's key and headers from `snapshot` (for a router token only: docs/roles.md). */
export function withCredentials(view: RouteTable, snapshot: RegistrySnapshot): RouteTable {
  return {
    ...view,
    lines: view.lines.map((l) => {
      const line = snapshot.lines.get(l.id);
      return { ...l, apiKey: line?.apiKey ?? null, headers: line?.headers ?? {} };
    }),
  };
}
