// Trend alert (docs/health.md): a line-score drop of more than `trendDropPoints` within `trendWindowMs`.
import type { TrendPoint } from "./health-types";
import type { HealthPolicy } from "./policy";

export interface TrendStep {
  trend: TrendPoint[];
  alert: { peak: TrendPoint } | null;
}

/**
 * `trend` is a decreasing run of scores (a monotonic queue), so its head is the peak of the window
 * and it stays short. `alerting` false: an alert is already running, only track.
 */
export function stepTrend(trend: TrendPoint[], point: TrendPoint, policy: HealthPolicy, alerting: boolean): TrendStep {
  const cut = point.at - policy.trendWindowMs;
  let next = trend.filter((p) => p.at >= cut);
  const peak = next[0];
  let alert: TrendStep["alert"] = null;
  if (alerting && peak && peak.score - point.score > policy.trendDropPoints) {
    alert = { peak };
    next = [];
  }
  for (let last = next.at(-1); last !== undefined && last.score <= point.score; last = next.at(-1)) next.pop();
  next.push(point);
  return { trend: next, alert };
}
