// The router's view of its tables, read at scrape time: version, age and failed pulls per route.
import type { RouteStatus } from "@linewatch/router-client";
import { Gauge, type Registry } from "prom-client";

export interface MetricsSources {
  tableStatus: () => RouteStatus[];
  now: () => number;
}

export function registerTableGauges(registry: Registry, sources: MetricsSources): void {
  new Gauge({
    name: "linewatch_router_table_version",
    help: "Version of the table in use, by route (absent: no table).",
    labelNames: ["route"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of sources.tableStatus()) if (s.version !== null) this.set({ route: s.route }, s.version);
    },
  });
  new Gauge({
    name: "linewatch_router_table_age_seconds",
    help: "Seconds since the control plane last confirmed the table of a route (200 or 304).",
    labelNames: ["route"] as const,
    registers: [registry],
    collect() {
      this.reset();
      const now = sources.now();
      for (const s of sources.tableStatus()) if (s.lastPullAt !== null) this.set({ route: s.route }, (now - s.lastPullAt) / 1000);
    },
  });
  new Gauge({
    name: "linewatch_router_table_pull_failures",
    help: "Consecutive failed table pulls, by route (0 while the control plane answers).",
    labelNames: ["route"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of sources.tableStatus()) this.set({ route: s.route }, s.consecutiveFailures);
    },
  });
}
