// Prometheus metrics of the control plane, on a registry the caller owns (never the global default).
//
// Two kinds of series:
// - what this replica's probes did (durations, outcomes, content length, field completeness, tokens):
//   counted as results come in, so `sum()` across replicas gives the fleet's figures;
// - what the database holds (line states, scores, table weights and versions, trend alerts): read at
//   scrape time, so every replica reports the same truth whichever of them ran the probe or publish.
// Labels are names of lines, samples and routes and small fixed sets (state, outcome, mode): never
// probe ids or content hashes.
//
// One file per family in metrics/: probes, health faults, lines, tables, webhooks, and the scrape's state.
import { collectDefaultMetrics, Registry } from "prom-client";
import type { Logger } from "./logger";
import { type HealthFaultSource, registerHealthMetrics } from "./metrics/health-metrics";
import { lineSeries } from "./metrics/line-series";
import { registerProbeMetrics } from "./metrics/probe-metrics";
import { type ScrapeState, sharedScrape } from "./metrics/scrape-state";
import { registerDatabaseUp, registerFromState } from "./metrics/state-series";
import { tableSeries } from "./metrics/table-series";
import { registerWebhookMetrics, type WebhookScrape } from "./metrics/webhook-metrics";

export {
  CONTENT_LENGTH_BUCKETS,
  FIELD_COMPLETENESS_BUCKETS,
  PROBE_DURATION_BUCKETS,
  PROBE_LATENESS_BUCKETS,
  type ProbeNames,
  type ProbeOutcome,
  probeOutcome,
} from "./metrics/probe-metrics";
export { readScrapeState, type ScrapeState } from "./metrics/scrape-state";
export { readWebhookScrape, type WebhookScrape } from "./metrics/webhook-metrics";

export interface MetricsSources {
  /** What the database holds now (see readScrapeState). */
  state(): Promise<ScrapeState>;
  /** Probes this replica has under way. */
  inFlight(): number;
  /** Results this replica's health machine could not apply, and the fail-safe cooldowns they caused. */
  healthFaults?(): HealthFaultSource;
  now(): number;
  logger?: Pick<Logger, "warn">;
  /** Webhook sinks' counts and queues as the database holds them (absent: no webhook series). */
  webhooks?(): Promise<WebhookScrape>;
}

export interface MetricsOptions {
  /** Process and Node.js metrics (CPU, memory, event loop, GC) in the same registry. Default true. */
  processMetrics?: boolean;
}

const NO_SOURCES: MetricsSources = {
  state: async () => ({ lines: [], samples: [], routes: [], health: [], tables: [], trendAlerts: [] }),
  inFlight: () => 0,
  now: () => Date.now(),
};

/** Process and Node.js metrics, under the linewatch_ prefix. */
function registerProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry, prefix: "linewatch_" });
  // prom-client names these gauges *_total, which Prometheus reserves for counters (promtool
  // rejects them); the same counts by type stay, as linewatch_nodejs_active_{handles,requests,resources}.
  for (const name of ["active_handles_total", "active_requests_total", "active_resources_total"])
    registry.removeSingleMetric(`linewatch_nodejs_${name}`);
}

/** Prometheus metrics on their own registry (never the global default), so tests get their own. */
export function createMetrics(registry: Registry = new Registry(), sources: MetricsSources = NO_SOURCES, options: MetricsOptions = {}) {
  if (options.processMetrics ?? true) registerProcessMetrics(registry);
  const scrape = sharedScrape(() => sources.state(), sources.logger);
  // Registered in the order /metrics lists them.
  const probes = registerProbeMetrics(registry, scrape, () => sources.inFlight());
  registerHealthMetrics(registry, () => sources.healthFaults?.());
  registerDatabaseUp(registry, scrape);
  registerFromState(registry, scrape, [...lineSeries(() => sources.now()), ...tableSeries()]);
  const webhooks = sources.webhooks;
  if (webhooks)
    registerWebhookMetrics(
      registry,
      () => webhooks(),
      () => sources.now(),
      sources.logger,
    );
  return { registry, observeProbe: probes.observeProbe, observeLateness: probes.observeLateness };
}

export type Metrics = ReturnType<typeof createMetrics>;
