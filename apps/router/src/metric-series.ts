// The router's per-request counts, as plain numbers bumped on the hot path and turned into Prometheus
// series only when /metrics is scraped: prom-client hashes label sets on every inc/observe, which
// costs more than the rest of a request's bookkeeping.
import type { AttemptReport } from "./attempt-report";

export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/** One (route, line)'s counts. */
export interface LineSeries {
  requests: Map<string, number>;
  attempts: Map<string, number>;
  interrupted: number;
  /** First attempts the table gave the line that went elsewhere because the router had ejected it. */
  heldBack: number;
  /** Live outcomes of attempts (the in-band check). */
  answers: Map<string, number>;
  promptTokens: number;
  completionTokens: number;
  /** Non-cumulative counts per bucket; the last one is +Inf. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

const bump = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);

export class RouterSeries {
  private readonly series = new Map<string, Map<string, LineSeries>>();
  /** Retries by route and reason. */
  readonly retries = new Map<string, Map<string, number>>();
  /** Retries the budget refused, by route. */
  readonly exhausted = new Map<string, number>();

  line(route: string, line: string): LineSeries {
    let byLine = this.series.get(route);
    if (byLine === undefined) {
      byLine = new Map();
      this.series.set(route, byLine);
    }
    let s = byLine.get(line);
    if (s === undefined) {
      s = {
        requests: new Map(),
        attempts: new Map(),
        interrupted: 0,
        heldBack: 0,
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
  }

  each(fn: (route: string, line: string, s: LineSeries) => void): void {
    for (const [route, byLine] of this.series) for (const [line, s] of byLine) fn(route, line, s);
  }

  request(route: string, line: string, outcome: string): void {
    bump(this.line(route, line).requests, outcome);
  }

  attempt(route: string, line: string, outcome: string, seconds: number | null): void {
    const s = this.line(route, line);
    bump(s.attempts, outcome);
    if (seconds === null) return;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[i] as number)) i++;
    s.buckets[i] = (s.buckets[i] as number) + 1;
    s.sum += seconds;
    s.count += 1;
  }

  retry(route: string, reason: string): void {
    let m = this.retries.get(route);
    if (m === undefined) {
      m = new Map();
      this.retries.set(route, m);
    }
    bump(m, reason);
  }

  budgetExhausted(route: string): void {
    this.exhausted.set(route, (this.exhausted.get(route) ?? 0) + 1);
  }

  answer(route: string, line: string, report: AttemptReport): void {
    const s = this.line(route, line);
    bump(s.answers, report.outcome);
    s.promptTokens += report.promptTokens;
    s.completionTokens += report.completionTokens;
  }

  interrupted(route: string, line: string): void {
    this.line(route, line).interrupted += 1;
  }

  heldBack(route: string, line: string): void {
    this.line(route, line).heldBack += 1;
  }
}
