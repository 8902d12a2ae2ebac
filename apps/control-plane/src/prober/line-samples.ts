import { applicableSamples, interleave, type Sample } from "@linewatch/core";
import type { CachedLine, RegistrySnapshot } from "../registry-cache";

/**
 * The samples that apply to each line, worked out once per registry snapshot, in the order their
 * slots take: the golden samples spread among the fingerprint ones (core interleave), so a fault
 * every golden sample sees is met within interval / golden samples (docs/tables.md#probe-frequency).
 */
export class LineSamples {
  private held: { snapshot: RegistrySnapshot; byLine: Map<string, Sample[]> } | null = null;

  of(snapshot: RegistrySnapshot, line: CachedLine): Sample[] {
    if (this.held?.snapshot !== snapshot) this.held = { snapshot, byLine: new Map() };
    let samples = this.held.byLine.get(line.id);
    if (!samples) {
      const all = applicableSamples(line, snapshot.samples.values());
      samples = interleave(
        all.filter((s) => !s.expect.fingerprint),
        all.filter((s) => s.expect.fingerprint),
      );
      this.held.byLine.set(line.id, samples);
    }
    return samples;
  }
}
