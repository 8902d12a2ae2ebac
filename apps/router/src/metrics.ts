// Prometheus metrics of the router, on a registry the caller owns (never the global one).
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { RouteStatus } from "@linewatch/router-client";

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
  attempt(route: string, line: string, outcome: AttemptOutcome, seconds: number | null): void;
  retry(route: string, reason: AttemptOutcome): void;
  /** A response whose body broke after its status went out (upstream died or client left). */
  interrupted(route: string, line: string): void;
}

export interface MetricsSources {
  tableStatus: () => RouteStatus[];
  now: () => number;
}

export function outcomeOfStatus(status: number): "ok" | "client_error" | "rate_limited" | "upstream_error" {
  if (status === 429) return "rate_limited";
  if (status >= 500) return "upstream_error";
  if (status >= 400) return "client_error";
  return "ok";
}

export function createMetrics(registry: Registry, sources: MetricsSources): RouterMetrics {
  const requests = new Counter({
    name: "linewatch_router_requests_total",
    help: "Requests answered, by route, line that answered (none if no line) and outcome.",
    labelNames: ["route", "line", "outcome"] as const,
    registers: [registry],
  });
  const attempts = new Counter({
    name: "linewatch_router_upstream_attempts_total",
    help: "Upstream attempts (first tries and retries), by route, line and outcome.",
    labelNames: ["route", "line", "outcome"] as const,
    registers: [registry],
  });
  const retries = new Counter({
    name: "linewatch_router_retries_total",
    help: "Requests retried on another line, by route and what the first attempt got.",
    labelNames: ["route", "reason"] as const,
    registers: [registry],
  });
  const interruptions = new Counter({
    name: "linewatch_router_responses_interrupted_total",
    help: "Responses whose body broke off after the status was sent.",
    labelNames: ["route", "line"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "linewatch_router_upstream_latency_seconds",
    help: "Time from sending to an upstream until its response headers, by route and line.",
    labelNames: ["route", "line"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
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

  // prom-client hashes the label object on every call; the hot path keeps the children.
  const children = new Map<string, { inc(): void } | { observe(v: number): void }>();
  const child = <T>(key: string, make: () => T): T => {
    let c = children.get(key) as T | undefined;
    if (c === undefined) {
      c = make();
      children.set(key, c as { inc(): void });
    }
    return c;
  };

  return {
    registry,
    request(route, line, outcome) {
      child(`r\0${route}\0${line}\0${outcome}`, () => requests.labels(route, line, outcome)).inc();
    },
    attempt(route, line, outcome, seconds) {
      child(`a\0${route}\0${line}\0${outcome}`, () => attempts.labels(route, line, outcome)).inc();
      if (seconds !== null) child(`l\0${route}\0${line}`, () => latency.labels(route, line)).observe(seconds);
    },
    retry(route, reason) {
      child(`x\0${route}\0${reason}`, () => retries.labels(route, reason)).inc();
    },
    interrupted(route, line) {
      child(`i\0${route}\0${line}`, () => interruptions.labels(route, line)).inc();
    },
  };
}
