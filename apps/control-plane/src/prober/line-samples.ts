import { applicableSamples, type Sample } from "@linewatch/core";
import type { CachedLine, RegistrySnapshot } from "../registry-cache";

/** The samples that apply to each line, worked out once per registry snapshot. */
export class LineSamples {
  private held: { snapshot: RegistrySnapshot; byLine: Map<string, Sample[]> } | null = null;

  of(snapshot: RegistrySnapshot, line: CachedLine): Sample[] {
    if (this.held?.snapshot !== snapshot) this.held = { snapshot, byLine: new Map() };
    let samples = this.held.byLine.get(line.id);
    if (!samples) {
      samples = applicableSamples(line, snapshot.samples.values());
      this.held.byLine.set(line.id, samples);
    }
    return samples;
  }
}
