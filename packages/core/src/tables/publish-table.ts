// Versioning: a new table version only when the table changed (weights, line set or mode).
import type { ComputedTable, TableMode } from "./compute-table";

export interface PublishedTable extends ComputedTable {
  /** Monotonic per route, from 1. */
  version: number;
  /** ms since epoch of the version's first publication. */
  generatedAt: number;
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

/** Identity of a table's content: mode and (line, weight) pairs, whatever the line order. */
export function tableKey(t: Pick<ComputedTable, "mode" | "lines">): string {
  const pairs = t.lines.map((l) => `${l.lineId}=${l.weight}`).sort();
  return `${t.mode}|${pairs.join(",")}`;
}

export const sameTable = (a: Pick<ComputedTable, "mode" | "lines">, b: Pick<ComputedTable, "mode" | "lines">): boolean =>
  tableKey(a) === tableKey(b);

export interface PublishResult {
  table: PublishedTable;
  changed: boolean;
  effects: TablePublishedEffect[];
}

/**
 * The table to serve after `next` was computed: `previous` unchanged when the content is the same,
 * else the next version. `cause` (what moved: a health reason, "line_set", …) goes into the event.
 */
export function publishTable(
  previous: PublishedTable | null,
  next: ComputedTable,
  now: number,
  cause: { reason: string; probeIds: string[] } = { reason: "recomputed", probeIds: [] },
): PublishResult {
  if (previous && previous.route === next.route && sameTable(previous, next)) {
    return { table: previous, changed: false, effects: [] };
  }
  const version = (previous?.version ?? 0) + 1;
  const table: PublishedTable = { route: next.route, mode: next.mode, lines: next.lines.map((l) => ({ ...l })), version, generatedAt: now };
  return {
    table,
    changed: true,
    effects: [
      {
        kind: "table_published",
        route: next.route,
        version,
        previousVersion: previous?.version ?? null,
        mode: next.mode,
        reason: cause.reason,
        probeIds: [...cause.probeIds],
      },
    ],
  };
}
