import { anchoredLength } from "@linewatch/core";
import type { ClaimedProbe } from "@linewatch/db";
import { median } from "simple-statistics";
import type { CachedLine, RegistrySnapshot } from "../registry-cache";

/** The usual lengths a probe's answer is held to (chars; null when unknown). */
export interface ProbeLengths {
  anchoredLength: number | null;
  peerLength: number | null;
}

const keyOf = (lineId: string, sampleId: string) => `${lineId}/${sampleId}`;

/**
 * Anchored usual lengths (chars) per line and sample, as the claims brought them from health, and
 * from them a line's peers' usual length: what a probe is scored against besides its own history.
 */
export class LengthAnchors {
  private readonly anchors = new Map<string, number>();
  /** Each route's line ids, indexed once per registry snapshot. */
  private mates: { snapshot: RegistrySnapshot; byRoute: Map<string, string[]> } | null = null;

  /** Keep the anchors a claimed batch brought. */
  record(claimed: readonly ClaimedProbe[]): void {
    for (const row of claimed) {
      const anchored = anchoredLength(row.lengthTrack ?? undefined);
      if (anchored !== null) this.anchors.set(keyOf(row.lineId, row.sampleId), anchored);
    }
  }

  /** The line's anchored length for the sample as last seen; null when none. */
  anchored(lineId: string, sampleId: string): number | null {
    return this.anchors.get(keyOf(lineId, sampleId)) ?? null;
  }

  /** What a probe of `sampleId` on `line` is scored against: its `anchored` length and its peers'. */
  of(snapshot: RegistrySnapshot, line: CachedLine, sampleId: string, anchored: number | null): ProbeLengths {
    return { anchoredLength: anchored, peerLength: this.peerLength(snapshot, line, sampleId) };
  }

  /**
   * The usual length of this sample on the line's route mates (the other lines of its routes), the
   * median of their anchors as this replica last saw them; null when none has one.
   */
  private peerLength(snapshot: RegistrySnapshot, line: CachedLine, sampleId: string): number | null {
    const byRoute = this.matesOf(snapshot);
    const mates = new Set(line.routes.flatMap((r) => byRoute.get(r.route) ?? []));
    mates.delete(line.id);
    const lengths = [...mates].flatMap((id) => this.anchors.get(keyOf(id, sampleId)) ?? []);
    return lengths.length === 0 ? null : median(lengths);
  }

  private matesOf(snapshot: RegistrySnapshot): Map<string, string[]> {
    if (this.mates?.snapshot === snapshot) return this.mates.byRoute;
    const byRoute = new Map<string, string[]>();
    for (const l of snapshot.lines.values()) {
      for (const r of l.routes) {
        const members = byRoute.get(r.route);
        if (members) members.push(l.id);
        else byRoute.set(r.route, [l.id]);
      }
    }
    this.mates = { snapshot, byRoute };
    return byRoute;
  }
}
