// Live traffic as evidence (docs/live-evidence.md), the control plane's side: store the routers' outcome
// windows (idempotent per router and window), judge each reported line with core/live, and when
// the verdict is "suspect" probe the line at once and record an event naming the live evidence
// and the confirming probes. The health machine gets every judgment through `onEvidence` (the
// fusion seam; engine.ts).
import {
  DEFAULT_LIVE_VERDICT,
  DEFAULT_LIVE_WINDOWS,
  type LiveEvidence,
  type LiveSummary,
  type LiveVerdict,
  liveVerdict,
  type OutcomeReport,
  summarizeLive,
  totalOf,
} from "@linewatch/core";
import { insertEvents, insertLineOutcomes, lineOutcomeWindows, type StoredProbeResult } from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { RegistrySnapshot } from "../registry-cache";
import type { LiveMetrics } from "./live-metrics";

export const LIVE_EVIDENCE_EVENT = "live_evidence";
/** A line judged suspect is probed at most this often for live evidence (a report arrives every few seconds). */
export const CONFIRM_INTERVAL_MS = 60_000;

export interface LiveServiceParts {
  registry: { get(): Promise<RegistrySnapshot> };
  probeNow(lineId: string): Promise<StoredProbeResult[]>;
  metrics: LiveMetrics;
  onEvidence(lineId: string, evidence: LiveEvidence): Promise<void> | void;
}

export interface LiveView {
  summary: LiveSummary;
  verdict: LiveVerdict;
}

export class LiveService {
  private readonly lastConfirm = new Map<string, number>();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger">,
    private readonly parts: LiveServiceParts,
  ) {}

  /** Stores a validated report; returns the line ids stored now (none when the window was seen before). */
  async receive(report: OutcomeReport): Promise<{ stored: string[] }> {
    const now = this.deps.clock.now();
    const rows = report.lines.map((l) => ({
      routerId: report.routerId,
      windowId: report.windowId,
      lineId: l.lineId,
      windowStart: new Date(report.windowStart),
      windowEnd: new Date(report.windowEnd),
      receivedAt: new Date(now),
      counts: l.counts,
      requests: totalOf(l.counts),
      promptTokens: l.promptTokens,
      completionTokens: l.completionTokens,
      latencyMsSum: l.latencyMsSum,
      ttfbMsSum: l.ttfbMsSum,
      heldBack: l.heldBack ?? 0,
    }));
    const stored = await insertLineOutcomes(this.deps.database.db, rows);
    if (stored.length > 0) {
      const names = await this.parts.registry.get();
      const storedSet = new Set(stored);
      for (const l of report.lines) {
        if (storedSet.has(l.lineId)) this.parts.metrics.observeReport(names.lines.get(l.lineId)?.name ?? l.lineId, l);
      }
      // Judged after the answer: a router's push never waits for a probe.
      for (const lineId of stored) this.track(this.judge(lineId));
    }
    return { stored };
  }

  /** The line's live summary and verdict now (GET /v1/lines/:id/health). */
  async view(lineId: string): Promise<LiveView> {
    const now = this.deps.clock.now();
    const since = new Date(now - DEFAULT_LIVE_WINDOWS.recentMs - DEFAULT_LIVE_WINDOWS.baselineMs);
    const summary = summarizeLive(await lineOutcomeWindows(this.deps.database.db, lineId, since), now);
    return { summary, verdict: liveVerdict(summary, DEFAULT_LIVE_VERDICT) };
  }

  /** Resolves once every judgment started so far has finished (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch((error: unknown) => this.deps.logger.warn("live evidence: judging a line failed", { error: String(error) }));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  private async judge(lineId: string): Promise<void> {
    const { summary, verdict } = await this.view(lineId);
    this.parts.metrics.observeSummary((await this.parts.registry.get()).lines.get(lineId)?.name ?? lineId, summary);
    const now = this.deps.clock.now();
    let probes: StoredProbeResult[] = [];
    if (verdict.suspect) {
      const last = this.lastConfirm.get(lineId);
      if (last !== undefined && now - last < CONFIRM_INTERVAL_MS) {
        await this.parts.onEvidence(lineId, { lineId, at: now, summary, verdict, probes: [] });
        return;
      }
      this.lastConfirm.set(lineId, now);
      probes = await this.parts.probeNow(lineId);
      await this.record(lineId, now, summary, verdict, probes);
    }
    await this.parts.onEvidence(lineId, {
      lineId,
      at: now,
      summary,
      verdict,
      probes: probes.map((p) => ({ id: p.id, sampleId: p.sampleId, passed: p.passed, score: p.score, hardFailure: p.hardFailure })),
    });
  }

  private async record(lineId: string, now: number, summary: LiveSummary, verdict: LiveVerdict, probes: StoredProbeResult[]) {
    const failed = probes.filter((p) => !p.passed).length;
    const confirm =
      probes.length === 0
        ? "no sample applies, nothing to confirm with"
        : `confirming probes: ${failed} of ${probes.length} failed${failed === 0 ? " (the golden samples pass; live traffic disagrees)" : ""}`;
    const r = summary.recent;
    await insertEvents(this.deps.database.db, [
      {
        at: new Date(now),
        kind: LIVE_EVIDENCE_EVENT,
        lineId,
        routeName: null,
        reason: `${verdict.reason}; ${confirm}`,
        data: {
          signal: verdict.suspect ? verdict.signal : null,
          counts: r.counts,
          requests: r.requests,
          window: { from: new Date(r.from).toISOString(), to: new Date(r.to - 1).toISOString() },
          routers: r.routers,
          heldBack: r.heldBack,
          failureRate: r.failureRate,
          silentRate: r.silentRate,
          baseline: { requests: summary.baseline.requests, failureRate: summary.baseline.failureRate },
          probeIds: probes.map((p) => p.id),
          probesFailed: failed,
        },
        dedupeKey: `live:${lineId}:${now}`,
      },
    ]);
  }
}
