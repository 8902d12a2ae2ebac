import { Counter, Gauge, type Registry } from "prom-client";
import type { Scrape, ScrapeState } from "./scrape-state";

/** A series set from the scrape's state; it has no samples when the state could not be read. */
export interface FromState {
  name: string;
  help: string;
  labelNames: readonly string[];
  /** Counters only go up: a count the database holds (events) is still one. */
  type?: "counter";
  fill(state: ScrapeState, set: (labels: Record<string, string>, value: number) => void): void;
}

/** linewatch_database_up: whether this scrape could read the database. */
export function registerDatabaseUp(registry: Registry, scrape: Scrape): void {
  new Gauge({
    name: "linewatch_database_up",
    help: "1 when this scrape could read the registry, health and tables from the database; 0 when it could not (those series are then absent).",
    registers: [registry],
    async collect() {
      this.set((await scrape()) ? 1 : 0);
    },
  });
}

/** Series set afresh at each scrape from what the database holds: a line or route that is gone leaves no series behind. */
export function registerFromState(registry: Registry, scrape: Scrape, series: readonly FromState[]): void {
  for (const { name, help, labelNames, type, fill } of series) {
    async function collect(this: Gauge | Counter) {
      const state = await scrape();
      this.reset();
      if (!state) return;
      fill(state, (labels, value) => (this instanceof Gauge ? this.set(labels, value) : this.inc(labels, value)));
    }
    const options = { name, help, labelNames, registers: [registry], collect };
    if (type === "counter") new Counter(options);
    else new Gauge(options);
  }
}
