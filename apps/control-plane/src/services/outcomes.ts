// Live-traffic outcomes routers report (docs/live-evidence.md): checked against the clock and the registry, then
// stored once per (router, window) and judged by the live service.
import { MAX_WINDOW_AGE_MS, MAX_WINDOW_FUTURE_MS, type OutcomeAck, type OutcomeReportBody } from "@linewatch/contract";
import type { AppDeps } from "../deps";
import type { Engine } from "../engine";
import { ValidationError } from "../errors";

export class OutcomeService {
  constructor(
    private readonly deps: AppDeps,
    private readonly engine: Engine,
  ) {}

  async receive(report: OutcomeReportBody): Promise<OutcomeAck> {
    const now = this.deps.clock.now();
    const start = Date.parse(report.windowStart);
    const end = Date.parse(report.windowEnd);
    if (end < start) throw ValidationError.field("windowEnd", "must not be before windowStart");
    if (end > now + MAX_WINDOW_FUTURE_MS || end < now - MAX_WINDOW_AGE_MS) {
      throw ValidationError.field("windowEnd", "must be within the last 24 h and at most 5 min ahead of the control plane's clock");
    }
    const snapshot = await this.engine.registry.get();
    const seen = new Set<string>();
    for (const [i, l] of report.lines.entries()) {
      if (!snapshot.lines.has(l.lineId)) throw ValidationError.field(`lines.${i}.lineId`, `no line ${l.lineId}`);
      if (seen.has(l.lineId)) throw ValidationError.field(`lines.${i}.lineId`, "listed twice in one report");
      seen.add(l.lineId);
    }
    const { stored } = await this.engine.live.receive(report);
    return { stored: stored.length, duplicate: report.lines.length > 0 && stored.length === 0 };
  }
}
