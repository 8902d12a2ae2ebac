// Prometheus metrics of the router, on a registry the caller owns (never the global one): the request
// counts (metric-series.ts, turned into series at scrape time by scraped-metrics.ts) and the table
// gauges (table-gauges.ts).
import type { Registry } from "prom-client";
import type { AttemptReport } from "./attempt-report";
import { RouterSeries } from "./metric-series";
import { registerScrapedMetrics } from "./scraped-metrics";
import { type MetricsSources, registerTableGauges } from "./table-gauges";

export { LATENCY_BUCKETS } from "./metric-series";
export type { MetricsSources } from "./table-gauges";

/** How a request ended, as the client saw it. */
export type RequestOutcome =
  | "ok"
  | "client_error"
  | "rate_limited"
  | "upstream_error"
  | "unreachable"
  | "timeout"
  | "no_line"
  | "unknown_route"
  | "bad_request";

/** How one upstream attempt ended. */
export type AttemptOutcome = "ok" | "client_error" | "rate_limited" | "upstream_error" | "unreachable" | "timeout" | "aborted";

export interface RouterMetrics {
  readonly registry: Registry;
  request(route: string, line: string, outcome: RequestOutcome): void;
  /** `seconds`: time to the response headers, when there were any. */
  attempt(route: string, line: string, outcome: AttemptOutcome, seconds: number | null): void;
  /** `reason`: the live outcome of the first attempt (http_5xx, empty, connect, …). */
  retry(route: string, reason: string): void;
  /** A retry the budget did not allow: the answer went to the client as it came. */
  budgetExhausted(route: string): void;
  /** The in-band check's outcome of one attempt, with its usage tokens (docs/live-evidence.md). */
  answer(route: string, line: string, report: AttemptReport): void;
  /** A response whose body broke after its status went out (upstream died or client left). */
  interrupted(route: string, line: string): void;
  /** A first attempt the table gave `line` that went elsewhere because the router had ejected it. */
  heldBack(route: string, line: string): void;
}

export function outcomeOfStatus(status: number): "ok" | "client_error" | "rate_limited" | "upstream_error" {
  if (status === 429) return "rate_limited";
  if (status >= 500) return "upstream_error";
  if (status >= 400) return "client_error";
  return "ok";
}

export function createMetrics(registry: Registry, sources: MetricsSources): RouterMetrics {
  const series = new RouterSeries();
  registerScrapedMetrics(registry, series);
  registerTableGauges(registry, sources);
  return {
    registry,
    request: (route, line, outcome) => series.request(route, line, outcome),
    attempt: (route, line, outcome, seconds) => series.attempt(route, line, outcome, seconds),
    retry: (route, reason) => series.retry(route, reason),
    budgetExhausted: (route) => series.budgetExhausted(route),
    answer: (route, line, report) => series.answer(route, line, report),
    interrupted: (route, line) => series.interrupted(route, line),
    heldBack: (route, line) => series.heldBack(route, line),
  };
}
