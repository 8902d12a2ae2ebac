// Probe results and live evidence as the API and the dashboard show them.
import type { ProbeResultResponse } from "@linewatch/contract";
import type { LiveStats } from "@linewatch/core";
import type { StoredProbeResult } from "@linewatch/db";
import type { LiveView } from "../../live/live-service";

export function resultView(r: StoredProbeResult & { sampleName?: string }): ProbeResultResponse {
  return {
    id: r.id,
    sampleId: r.sampleId,
    sample: r.sampleName ?? "",
    trigger: r.trigger,
    startedAt: new Date(r.startedAt).toISOString(),
    latencyMs: r.latencyMs,
    status: r.status,
    errorClass: r.errorClass,
    hardFailure: r.hardFailure,
    passed: r.passed,
    score: r.score,
    components: r.components,
    checks: r.checks,
    reasons: r.reasons,
    contentLength: r.contentLength,
    contentHash: r.contentHash,
    excerpt: r.excerpt,
    tokens: r.tokens,
  };
}

function statsView(s: LiveStats) {
  return { ...s, from: new Date(s.from).toISOString(), to: new Date(s.to - 1).toISOString() };
}

export function liveView(live: LiveView) {
  return {
    recent: statsView(live.summary.recent),
    baseline: statsView(live.summary.baseline),
    suspect: live.verdict.suspect,
    reason: live.verdict.reason,
  };
}
