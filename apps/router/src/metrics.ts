// Prometheus metrics of the router, on a registry the caller owns (never the global one).
// The per-request series are plain numbers bumped on the hot path and turned into Prometheus
// series only when /metrics is scraped: prom-client hashes label sets on every inc/observe,
// which costs more than the rest of a request's bookkeeping.

import type { RouteStatus } from "@linewatch/router-client";
import { Gauge, type Metric, type Registry } from "prom-client";
import type { AttemptReport } from "./upstream";

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
  /** The in-band check's outcome of one attempt, with its usage tokens (SPEC §9). */
  answer(route: string, line: string, report: AttemptReport): void;
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

export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

interface LineSeries {
  requests: Map<string, number>;
  attempts: Map<string, number>;
  interrupted: number;
  /** Live outcomes of attempts (the in-band check). */
  answers: Map<string, number>;
  promptTokens: number;
  completionTokens: number;
  /** Non-cumulative counts per bucket; the last one is +Inf. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

type Value = { labels: Record<string, string>; value: number; metricName?: string };

/** A metric whose values are computed at scrape time. */
function scrapeMetric(registry: Registry, name: string, help: string, type: "counter" | "histogram", values: () => Value[]): void {
  const metric = {
    name,
    help,
    type,
    aggregator: "sum",
    get: async () => ({ name, help, type, aggregator: "sum", values: values() }),
    reset() {},
  };
  registry.registerMetric(metric as unknown as Metric);
}

export function createMetrics(registry: Registry, sources: MetricsSources): RouterMetrics {
  const series = new Map<string, Map<string, LineSeries>>();
  const retries = new Map<string, Map<string, number>>();
  const exhausted = new Map<string, number>();

  const lineSeries = (route: string, line: string): LineSeries => {
    let byLine = series.get(route);
    if (byLine === undefined) {
      byLine = new Map();
      series.set(route, byLine);
    }
    let s = byLine.get(line);
    if (s === undefined) {
      s = {
        requests: new Map(),
        attempts: new Map(),
        interrupted: 0,
        answers: new Map(),
        promptTokens: 0,
        completionTokens: 0,
        buckets: new Float64Array(LATENCY_BUCKETS.length + 1),
        sum: 0,
        count: 0,
      };
      byLine.set(line, s);
    }
    return s;
  };

  const each = (fn: (route: string, line: string, s: LineSeries) => void) => {
    for (const [route, byLine] of series) for (const [line, s] of byLine) fn(route, line, s);
  };

  scrapeMetric(
    registry,
    "linewatch_router_requests_total",
    "Requests answered, by route, line that answered (none if no line) and outcome.",
    "counter",
    () => {
      const out: Value[] = [];
      each((route, line, s) => {
        for (const [outcome, value] of s.requests) out.push({ labels: { route, line, outcome }, value });
      });
      return out;
    },
  );
  scrapeMetric(
    registry,
    "linewatch_router_upstream_attempts_total",
    "Upstream attempts (first tries and retries), by route, line and outcome.",
    "counter",
    () => {
      const out: Value[] = [];
      each((route, line, s) => {
        for (const [outcome, value] of s.attempts) out.push({ labels: { route, line, outcome }, value });
      });
      return out;
    },
  );
  scrapeMetric(
    registry,
    "linewatch_router_retries_total",
    "Requests retried on another line, by route and what the first attempt got.",
    "counter",
    () => {
      const out: Value[] = [];
      for (const [route, byReason] of retries) for (const [reason, value] of byReason) out.push({ labels: { route, reason }, value });
      return out;
    },
  );
  scrapeMetric(
    registry,
    "linewatch_router_responses_interrupted_total",
    "Responses whose body broke off after the status was sent.",
    "counter",
    () => {
      const out: Value[] = [];
      each((route, line, s) => {
        if (s.interrupted > 0) out.push({ labels: { route, line }, value: s.interrupted });
      });
      return out;
    },
  );
  scrapeMetric(
    registry,
    "linewatch_router_live_answers_total",
    "Upstream answers by the in-band check's outcome (ok, empty, masked_error, cut, http_4xx, http_5xx, rate_limited, timeout, connect), by route and line.",
    "counter",
    () => {
      const out: Value[] = [];
      each((route, line, s) => {
        for (const [outcome, value] of s.answers) out.push({ labels: { route, line, outcome }, value });
      });
      return out;
    },
  );
  scrapeMetric(
    registry,
    "linewatch_router_tokens_total",
    "Usage tokens of upstream answers, by route, line and direction (prompt | completion).",
    "counter",
    () => {
      const out: Value[] = [];
      each((route, line, s) => {
        if (s.answers.size === 0) return;
        out.push({ labels: { route, line, direction: "prompt" }, value: s.promptTokens });
        out.push({ labels: { route, line, direction: "completion" }, value: s.completionTokens });
      });
      return out;
    },
  );
  scrapeMetric(
    registry,
    "linewatch_router_retry_budget_exhausted_total",
    "Retries the retry budget did not allow (the answer went to the client as it came), by route.",
    "counter",
    () => [...exhausted].map(([route, value]) => ({ labels: { route }, value })),
  );
  const latencyName = "linewatch_router_upstream_latency_seconds";
  scrapeMetric(
    registry,
    latencyName,
    "Time from sending to an upstream until its response headers, by route and line.",
    "histogram",
    () => {
      const out: Value[] = [];
      each((route, line, s) => {
        if (s.count === 0) return;
        let cumulative = 0;
        for (let i = 0; i <= LATENCY_BUCKETS.length; i++) {
          cumulative += s.buckets[i] as number;
          const le = i < LATENCY_BUCKETS.length ? String(LATENCY_BUCKETS[i]) : "+Inf";
          out.push({ metricName: `${latencyName}_bucket`, labels: { route, line, le }, value: cumulative });
        }
        out.push({ metricName: `${latencyName}_sum`, labels: { route, line }, value: s.sum });
        out.push({ metricName: `${latencyName}_count`, labels: { route, line }, value: s.count });
      });
      return out;
    },
  );

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

  return {
    registry,
    request(route, line, outcome) {
      const m = lineSeries(route, line).requests;
      m.set(outcome, (m.get(outcome) ?? 0) + 1);
    },
    attempt(route, line, outcome, seconds) {
      const s = lineSeries(route, line);
      s.attempts.set(outcome, (s.attempts.get(outcome) ?? 0) + 1);
      if (seconds !== null) {
        let i = 0;
        while (i < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[i] as number)) i++;
        (s.buckets as Float64Array)[i] = (s.buckets[i] as number) + 1;
        s.sum += seconds;
        s.count += 1;
      }
    },
    retry(route, reason) {
      let m = retries.get(route);
      if (m === undefined) {
        m = new Map();
        retries.set(route, m);
      }
      m.set(reason, (m.get(reason) ?? 0) + 1);
    },
    budgetExhausted(route) {
      exhausted.set(route, (exhausted.get(route) ?? 0) + 1);
    },
    answer(route, line, report) {
      const s = lineSeries(route, line);
      s.answers.set(report.outcome, (s.answers.get(report.outcome) ?? 0) + 1);
      s.promptTokens += report.promptTokens;
      s.completionTokens += report.completionTokens;
    },
    interrupted(route, line) {
      lineSeries(route, line).interrupted += 1;
    },
  };
}
