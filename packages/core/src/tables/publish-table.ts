// Versioning: a new table version only when the table changed (weights, line set, mode, or how to
// reach a line).
import type { ComputedTable, TableLine, TableMode } from "./compute-table";
import type { RouteTable } from "./route-table";

export interface PublishedTable<L extends TableLine = TableLine> {
  route: string;
  mode: TableMode;
  lines: L[];
  /** Monotonic per route, from 1. */
  version: number;
  /** ms since epoch of the version's first publication. */
  generatedAt: number;
}

/**
 * A line of a published table as the control plane stores it: its weight and what a router needs to
 * reach it, without the credentials themselves (they are added per request, for router tokens only).
 */
export interface PublishedLine extends TableLine {
  /** The same as lineId: the wire's name for it. */
  id: string;
  name: string;
  tier: string;
  state: string;
  protocol: string;
  baseUrl: string;
  model: string;
  /** A revision of the line's key and headers (never the values): a new key makes a new version, so routers re-pull. */
  credentials: string;
}

export interface TablePublishedEffect {
  kind: "table_published";
  route: string;
  version: number;
  previousVersion: number | null;
  mode: TableMode;
  reason: string;
  probeIds: string[];
}

/**
 * What of a line makes a table different: its weight (the default), or more (see publishedLineKey).
 * Two lines with different lineIds never have the same key (the key names the line).
 */
export type LineKey<L extends TableLine> = (line: L) => string;

const weightKey: LineKey<TableLine> = (l) => `${l.lineId}=${l.weight}`;

/** States that carry a share rather than the line's own weight: lines entering or leaving them together keep their relative weights. */
const SHARE_STATES: ReadonlySet<string> = new Set(["unprobed", "probation"]);

/** What of a line's state makes a new version (live and replay alike): which share state it is in, if any. */
export function versionedState(state: string | undefined): string | null {
  return state !== undefined && SHARE_STATES.has(state) ? state : null;
}

/**
 * A published line's identity for routers: weight and how to reach it; its shown state alone is not a
 * new version, except entering or leaving `unprobed` or `probation`: new lines judged together keep
 * their relative weights, and the table must not go on showing them unprobed or on probation once they
 * are in service (docs/tables.md#versions, docs/health.md#new-lines).
 */
export const publishedLineKey: LineKey<PublishedLine> = (l) =>
  JSON.stringify([l.lineId, l.weight, l.name, l.tier, l.protocol, l.baseUrl, l.model, l.credentials, versionedState(l.state)]);

/** Identity of a table's content: mode and its lines' keys, whatever the line order. */
export function tableKey<L extends TableLine>(t: { mode: TableMode; lines: readonly L[] }, lineKey: LineKey<L> = weightKey): string {
  const keys = t.lines.map(lineKey).sort();
  return `${t.mode}|${keys.join(",")}`;
}

export function sameTable<L extends TableLine>(
  a: { mode: TableMode; lines: readonly L[] },
  b: { mode: TableMode; lines: readonly L[] },
  lineKey: LineKey<L> = weightKey,
): boolean {
  if (a.mode !== b.mode || a.lines.length !== b.lines.length) return false;
  // The usual case: the same lines in the same order, each once. Then the tables are the same when each
  // line's key is (a key names its line), and the first line that differs ends the comparison.
  const seen = new Set<string>();
  for (let i = 0; i < a.lines.length; i++) {
    const id = (a.lines[i] as L).lineId;
    if (id !== (b.lines[i] as L).lineId || seen.has(id)) return tableKey(a, lineKey) === tableKey(b, lineKey);
    seen.add(id);
  }
  for (let i = 0; i < a.lines.length; i++) if (lineKey(a.lines[i] as L) !== lineKey(b.lines[i] as L)) return false;
  return true;
}

export interface PublishResult<L extends TableLine = TableLine> {
  table: PublishedTable<L>;
  changed: boolean;
  effects: TablePublishedEffect[];
}

/**
 * The table to serve after `next` was computed: `previous` unchanged when the content is the same,
 * else the next version. `cause` (what moved: a health reason, "line_set", …) goes into the event.
 * Content is the mode and each line's weight; publishTableBy takes what else of a line counts.
 */
export function publishTable(
  previous: PublishedTable | null,
  next: ComputedTable,
  now: number,
  cause: { reason: string; probeIds: string[] } = { reason: "recomputed", probeIds: [] },
): PublishResult {
  return publishTableBy(weightKey, previous, next, now, cause);
}

/**
 * publishTable, with `lineKey` saying what of a line counts as content (e.g. publishedLineKey).
 * `previous` may be a version alone, when the content stored under it cannot be read: the next
 * version follows it.
 */
export function publishTableBy<L extends TableLine>(
  lineKey: LineKey<L>,
  previous: PublishedTable<L> | number | null,
  next: ComputedTable<L>,
  now: number,
  cause: { reason: string; probeIds: string[] } = { reason: "recomputed", probeIds: [] },
): PublishResult<L> {
  if (typeof previous === "object" && previous?.route === next.route && sameTable(previous, next, lineKey)) {
    return { table: previous, changed: false, effects: [] };
  }
  const previousVersion = typeof previous === "number" ? previous : (previous?.version ?? null);
  const version = (previousVersion ?? 0) + 1;
  const table: PublishedTable<L> = {
    route: next.route,
    mode: next.mode,
    lines: next.lines.map((l) => ({ ...l })),
    version,
    generatedAt: now,
  };
  return {
    table,
    changed: true,
    effects: [
      {
        kind: "table_published",
        route: next.route,
        version,
        previousVersion,
        mode: next.mode,
        reason: cause.reason,
        probeIds: [...cause.probeIds],
      },
    ],
  };
}

/** The wire form of a published table, without credentials (docs/api.md). */
export function toRouteTable(t: PublishedTable<PublishedLine>): RouteTable {
  return {
    route: t.route,
    version: t.version,
    generatedAt: new Date(t.generatedAt).toISOString(),
    mode: t.mode,
    lines: t.lines.map(({ id, name, tier, state, weight, protocol, baseUrl, model }) => ({
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
