import { applicableSamples, type HealthPolicy, linePolicy, probeIntervalMs } from "@linewatch/core";
import type { CachedLine, RegistrySnapshot } from "../registry-cache";

/** What the health machine needs of a line besides its health. */
export interface LinePolicy {
  policy: HealthPolicy;
  /** The line's probe interval; undefined when its budget allows no probe at all (core then assumes its default). */
  intervalMs: number | undefined;
  /** The samples that apply to the line: a new line is in service once each has passed (docs/health.md#new-lines). */
  sampleIds: string[];
  /** The line's fast interval (after a trend alert); undefined when its budget allows no probe at all. */
  fastIntervalMs: number | undefined;
}

/** Each line's health policy and probe intervals, worked out once per registry snapshot. */
export class LinePolicies {
  private held: { snapshot: RegistrySnapshot; byLine: Map<string, LinePolicy> } | null = null;

  of(snapshot: RegistrySnapshot, line: CachedLine): LinePolicy {
    if (this.held?.snapshot !== snapshot) this.held = { snapshot, byLine: new Map() };
    let entry = this.held.byLine.get(line.id);
    if (!entry) {
      const applicable = applicableSamples(line, snapshot.samples.values());
      const samples = applicable.length;
      const interval = probeIntervalMs(line, samples);
      const fast = probeIntervalMs(line, samples, { fast: true });
      entry = {
        policy: linePolicy(line, snapshot.routes),
        intervalMs: Number.isFinite(interval) ? interval : undefined,
        fastIntervalMs: Number.isFinite(fast) ? fast : undefined,
        sampleIds: applicable.map((s) => s.id),
      };
      this.held.byLine.set(line.id, entry);
    }
    return entry;
  }
}
