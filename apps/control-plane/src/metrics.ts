import { Registry } from "prom-client";

/** Prometheus metrics on their own registry (never the global default), so tests get their own. */
export function createMetrics(registry: Registry = new Registry()) {
  return { registry };
}

export type Metrics = ReturnType<typeof createMetrics>;
