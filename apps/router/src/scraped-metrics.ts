// The router's request metrics, computed from RouterSeries when /metrics is scraped.
import type { Metric, Registry } from "prom-client";
import { LATENCY_BUCKETS, type LineSeries, type RouterSeries } from "./metric-series";

type Value = { labels: Record<string, string>; value: number; metricName?: string };

interface ScrapedMetric {
  name: string;
  help: string;
  type: "counter" | "histogram";
  values: (series: RouterSeries) => Value[];
}

/** One value per (route, line) and key of a per-line map. */
const perLine =
  (pick: (s: LineSeries) => Map<string, number>, key: string) =>
  (series: RouterSeries): Value[] => {
    const out: Value[] = [];
    series.each((route, line, s) => {
      for (const [k, value] of pick(s)) out.push({ labels: { route, line, [key]: k }, value });
    });
    return out;
  };

function tokens(series: RouterSeries): Value[] {
  const out: Value[] = [];
  series.each((route, line, s) => {
    if (s.answers.size === 0) return;
    out.push({ labels: { route, line, direction: "prompt" }, value: s.promptTokens });
    out.push({ labels: { route, line, direction: "completion" }, value: s.completionTokens });
  });
  return out;
}

const LATENCY = "linewatch_router_upstream_latency_seconds";
function latency(series: RouterSeries): Value[] {
  const out: Value[] = [];
  series.each((route, line, s) => {
    if (s.count === 0) return;
    let cumulative = 0;
    for (let i = 0; i <= LATENCY_BUCKETS.length; i++) {
      cumulative += s.buckets[i] as number;
      const le = i < LATENCY_BUCKETS.length ? String(LATENCY_BUCKETS[i]) : "+Inf";
      out.push({ metricName: `${LATENCY}_bucket`, labels: { route, line, le }, value: cumulative });
    }
    out.push({ metricName: `${LATENCY}_sum`, labels: { route, line }, value: s.sum });
    out.push({ metricName: `${LATENCY}_count`, labels: { route, line }, value: s.count });
  });
  return out;
}

const METRICS: readonly ScrapedMetric[] = [
  {
    name: "linewatch_router_requests_total",
    help: "Requests answered, by route, line that answered (none if no line) and outcome.",
    type: "counter",
    values: perLine((s) => s.requests, "outcome"),
  },
  {
    name: "linewatch_router_upstream_attempts_total",
    help: "Upstream attempts (first tries and retries), by route, line and outcome.",
    type: "counter",
    values: perLine((s) => s.attempts, "outcome"),
  },
  {
    name: "linewatch_router_retries_total",
    help: "Requests retried on another line, by route and what the first attempt got.",
    type: "counter",
    values: (series) =>
      [...series.retries].flatMap(([route, byReason]) => [...byReason].map(([reason, value]) => ({ labels: { route, reason }, value }))),
  },
  {
    name: "linewatch_router_responses_interrupted_total",
    help: "Responses whose body broke off after the status was sent.",
    type: "counter",
    values: (series) => {
      const out: Value[] = [];
      series.each((route, line, s) => {
        if (s.interrupted > 0) out.push({ labels: { route, line }, value: s.interrupted });
      });
      return out;
    },
  },
  {
    name: "linewatch_router_held_back_total",
    help: "First attempts the table gave a line that went to another line because the router had ejected it (docs/router.md#ejection), by route and line.",
    type: "counter",
    values: (series) => {
      const out: Value[] = [];
      series.each((route, line, s) => {
        if (s.heldBack > 0) out.push({ labels: { route, line }, value: s.heldBack });
      });
      return out;
    },
  },
  {
    name: "linewatch_router_live_answers_total",
    help: "Upstream answers by the in-band check's outcome (ok, empty, masked_error, cut, http_4xx, http_5xx, rate_limited, timeout, connect), by route and line.",
    type: "counter",
    values: perLine((s) => s.answers, "outcome"),
  },
  {
    name: "linewatch_router_tokens_total",
    help: "Usage tokens of upstream answers, by route, line and direction (prompt | completion).",
    type: "counter",
    values: tokens,
  },
  {
    name: "linewatch_router_retry_budget_exhausted_total",
    help: "Retries the retry budget did not allow (the answer went to the client as it came), by route.",
    type: "counter",
    values: (series) => [...series.exhausted].map(([route, value]) => ({ labels: { route }, value })),
  },
  {
    name: LATENCY,
    help: "Time from sending to an upstream until its response headers, by route and line.",
    type: "histogram",
    values: latency,
  },
];

/** Registers every request metric, each computed from `series` at scrape time. */
export function registerScrapedMetrics(registry: Registry, series: RouterSeries): void {
  for (const m of METRICS) {
    const { name, help, type } = m;
    const metric = {
      name,
      help,
      type,
      aggregator: "sum",
      get: async () => ({ name, help, type, aggregator: "sum", values: m.values(series) }),
      reset() {},
    };
    // Cast: a registry only calls name and get(), but prom-client types Metric as the union of its own classes.
    registry.registerMetric(metric as unknown as Metric);
  }
}
