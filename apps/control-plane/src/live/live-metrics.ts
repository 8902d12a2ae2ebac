// Per-line live-traffic metrics of the control plane: what this replica received from routers
// (counters: sum across replicas), and the effective success rate of the last judgment it made.
import { LIVE_OUTCOMES, type LiveSummary, type OutcomeReportLine } from "@linewatch/core";
import { Counter, Gauge, type Registry } from "prom-client";

export function createLiveMetrics(registry: Registry) {
  const requests = new Counter({
    name: "linewatch_live_requests_total",
    help: "Live answers routers reported, by line and outcome (docs/live-evidence.md).",
    labelNames: ["line", "outcome"] as const,
    registers: [registry],
  });
  const tokens = new Counter({
    name: "linewatch_live_tokens_total",
    help: "Usage tokens of live answers routers reported, by line and direction (prompt | completion).",
    labelNames: ["line", "direction"] as const,
    registers: [registry],
  });
  const heldBack = new Counter({
    name: "linewatch_live_held_back_total",
    help: "Requests routers reported held back from a line by ejection: sent to another line (docs/router.md#ejection).",
    labelNames: ["line"] as const,
    registers: [registry],
  });
  const success = new Gauge({
    name: "linewatch_live_success_rate",
    help: "Share of a line's live answers over the recent window that were ok (effective success rate).",
    labelNames: ["line"] as const,
    registers: [registry],
  });
  const failure = new Gauge({
    name: "linewatch_live_failure_rate",
    help: "Passive failure rate of a line over the recent window (4xx excluded).",
    labelNames: ["line"] as const,
    registers: [registry],
  });
  return {
    observeReport(line: string, report: OutcomeReportLine): void {
      for (const o of LIVE_OUTCOMES) if (report.counts[o] > 0) requests.inc({ line, outcome: o }, report.counts[o]);
      if (report.promptTokens > 0) tokens.inc({ line, direction: "prompt" }, report.promptTokens);
      if (report.completionTokens > 0) tokens.inc({ line, direction: "completion" }, report.completionTokens);
      if ((report.heldBack ?? 0) > 0) heldBack.inc({ line }, report.heldBack);
    },
    observeSummary(line: string, summary: LiveSummary): void {
      if (summary.recent.successRate === null) return;
      success.set({ line }, summary.recent.successRate);
      failure.set({ line }, summary.recent.failureRate);
    },
  };
}
export type LiveMetrics = ReturnType<typeof createLiveMetrics>;
