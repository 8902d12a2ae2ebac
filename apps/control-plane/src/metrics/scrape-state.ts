import type { PublishedLine, PublishedTable } from "@linewatch/core";
import {
  countEventsByLine,
  type Database,
  errorSummary,
  type LineHealthRow,
  listLineHealth,
  listLines,
  listPublishedTables,
  listRouteRows,
  listSamples,
} from "@linewatch/db";
import type { Logger } from "../logger";

/** The registry and health as the database holds them, read once per scrape. */
export interface ScrapeState {
  lines: { id: string; name: string; tier: string; protocol: string; adminState: string; routes: { route: string }[] }[];
  samples: { id: string; name: string }[];
  routes: string[];
  health: Pick<LineHealthRow, "lineId" | "state" | "score" | "health">[];
  /** The published tables this version can read (another shape waits for its next publish). */
  tables: PublishedTable<PublishedLine>[];
  trendAlerts: { lineId: string; count: number }[];
}

export async function readScrapeState(database: Pick<Database, "db">): Promise<ScrapeState> {
  const db = database.db;
  const [lines, samples, routes, health, tables, trendAlerts] = await Promise.all([
    listLines(db),
    listSamples(db),
    listRouteRows(db),
    listLineHealth(db),
    listPublishedTables(db),
    countEventsByLine(db, "trend_alert"),
  ]);
  return {
    lines: lines.map(({ id, name, tier, protocol, adminState, routes }) => ({ id, name, tier, protocol, adminState, routes })),
    samples: samples.map(({ id, name }) => ({ id, name })),
    routes: routes.map((r) => r.name),
    health,
    tables: tables.flatMap((t) => (t.table ? [t.table] : [])),
    trendAlerts,
  };
}

/** The database's state for the scrape under way; null when it could not be read. */
export type Scrape = () => Promise<ScrapeState | null>;

/**
 * One read of the database per scrape, shared by every collect() of that scrape: prom-client
 * starts them all synchronously, so they find the same promise.
 */
export function sharedScrape(read: () => Promise<ScrapeState>, logger?: Pick<Logger, "warn">): Scrape {
  let pending: Promise<ScrapeState | null> | null = null;
  return () =>
    (pending ??= read()
      .catch((error: unknown) => {
        logger?.warn("metrics: cannot read the database state", errorSummary(error));
        return null;
      })
      .finally(() => {
        pending = null;
      }));
}
