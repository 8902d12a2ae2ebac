import { TABLE_MODES } from "@linewatch/core";
import type { ScrapeState } from "./scrape-state";
import type { FromState } from "./state-series";

/** The published tables of the routes that exist (a deleted route's last table is not reported). */
const liveTables = (state: ScrapeState) => {
  const routes = new Set(state.routes);
  return state.tables.filter((t) => routes.has(t.route));
};

/** The tables' series, read at scrape time: each line's weight, and each table's version, date and mode. */
export function tableSeries(): FromState[] {
  return [
    {
      name: "linewatch_line_weight",
      help: "Weight of the line in the route's published table, for every line of the route (a table's weights sum to 10000; 0 = no traffic).",
      labelNames: ["route", "line"],
      fill: (state, set) => {
        const tables = new Map(liveTables(state).map((t) => [t.route, new Map(t.lines.map((l) => [l.lineId, l.weight]))]));
        for (const l of state.lines) {
          for (const { route } of l.routes) {
            const table = tables.get(route);
            // Before a route's first publication there is no weight to report.
            if (table) set({ route, line: l.name }, table.get(l.id) ?? 0);
          }
        }
      },
    },
    {
      name: "linewatch_table_version",
      help: "Version of the route's published table; it goes up by one per publish, so changes() or increase() count publishes.",
      labelNames: ["route"],
      fill: (state, set) => {
        for (const t of liveTables(state)) set({ route: t.route }, t.version);
      },
    },
    {
      name: "linewatch_table_published_timestamp_seconds",
      help: "When the route's current table was published (Unix time).",
      labelNames: ["route"],
      fill: (state, set) => {
        for (const t of liveTables(state)) set({ route: t.route }, t.generatedAt / 1000);
      },
    },
    {
      name: "linewatch_table_mode",
      help: "1 for the mode of the route's table, 0 for the others (normal; degraded: no paid line usable; panic: no line usable).",
      labelNames: ["route", "mode"],
      fill: (state, set) => {
        for (const t of liveTables(state)) for (const m of TABLE_MODES) set({ route: t.route, mode: m }, t.mode === m ? 1 : 0);
      },
    },
  ];
}
