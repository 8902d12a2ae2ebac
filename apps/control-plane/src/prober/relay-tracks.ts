import {
  type FingerprintPeer,
  type FingerprintTrack,
  fingerprintThreshold,
  type Health,
  probeIntervalMs,
  type Sample,
  type ShapeTrack,
  shapeChangedRecently,
  type Tier,
  type UsagePeer,
  type UsageTrack,
} from "@linewatch/core";
import type { ClaimedProbe } from "@linewatch/db";
import type { CachedLine, RegistrySnapshot } from "../registry-cache";

/** What a probe's fingerprint and usage checks are held to (docs/scoring.md#what-a-relay-can-fake). */
export interface RelayReferences {
  tier: Tier;
  /** The line's fingerprint track for the sample and its paid peers'; the threshold for its samples and interval. */
  fingerprint: { track: FingerprintTrack | null; peers: FingerprintPeer[]; threshold: number; shapeChanged: boolean };
  usage: { track: UsageTrack | null; peers: UsagePeer[] };
}

const keyOf = (lineId: string, sampleId: string) => `${lineId}/${sampleId}`;

/**
 * The lines' fingerprint and usage tracks per sample, and the shape of their answers, as the claims
 * brought them from health (like LengthAnchors): what a probe is judged against, its own and those
 * of its route mates naming the same model (its peers). A replica sees a peer's track as of its
 * latest claim of that peer's sample: anchors move slowly, so that is recent enough.
 */
export class RelayTracks {
  private readonly fingerprints = new Map<string, FingerprintTrack>();
  private readonly usage = new Map<string, UsageTrack>();
  private readonly shapes = new Map<string, ShapeTrack>();
  /** Each line's peers (same protocol, same model, a route in common), indexed once per registry snapshot. */
  private peers: { snapshot: RegistrySnapshot; byLine: Map<string, CachedLine[]> } | null = null;

  /** Keep the tracks a claimed batch brought (a track health no longer has is forgotten). */
  record(claimed: readonly ClaimedProbe[]): void {
    for (const row of claimed) {
      const key = keyOf(row.lineId, row.sampleId);
      setOrDelete(this.fingerprints, key, row.fingerprintTrack);
      setOrDelete(this.usage, key, row.usageTrack);
      setOrDelete(this.shapes, row.lineId, row.shapeTrack);
    }
  }

  /** Keep the tracks of these lines' health as read (a manual probe reads its line's and its peers'). */
  recordHealth(rows: readonly { lineId: string; health: Health | null }[]): void {
    for (const { lineId, health } of rows) {
      if (!health) continue;
      for (const [sampleId, t] of Object.entries(health.fingerprints)) this.fingerprints.set(keyOf(lineId, sampleId), t);
      for (const [sampleId, t] of Object.entries(health.usage)) this.usage.set(keyOf(lineId, sampleId), t);
      setOrDelete(this.shapes, lineId, health.shape);
    }
  }

  /** The ids of a line's peers (route mates speaking its protocol and naming its model). */
  peerIds(snapshot: RegistrySnapshot, line: CachedLine): string[] {
    return this.peersOf(snapshot, line).map((p) => p.id);
  }

  /** Forget what the registry no longer has (a deleted line or sample). */
  retain(keep: (lineId: string, sampleId: string) => boolean, keepLine: (lineId: string) => boolean): void {
    for (const map of [this.fingerprints, this.usage])
      for (const key of map.keys()) {
        const [lineId = "", sampleId = ""] = key.split("/");
        if (!keep(lineId, sampleId)) map.delete(key);
      }
    for (const lineId of this.shapes.keys()) if (!keepLine(lineId)) this.shapes.delete(lineId);
  }

  /** The references of a probe of `sample` on `line`; `samples` are the line's applicable samples. */
  of(snapshot: RegistrySnapshot, line: CachedLine, sample: Sample, samples: readonly Sample[], now: number): RelayReferences {
    const peers = this.peersOf(snapshot, line);
    const fingerprintSamples = samples.filter((s) => s.expect.fingerprint).length;
    return {
      tier: line.tier,
      fingerprint: {
        track: this.fingerprints.get(keyOf(line.id, sample.id)) ?? null,
        peers: peers.map((p) => ({ tier: p.tier, track: this.fingerprints.get(keyOf(p.id, sample.id)) ?? null })),
        // The regular interval: a fast spell must not lower the bar (docs/scoring.md#what-a-relay-can-fake).
        threshold: fingerprintThreshold({ samples: fingerprintSamples, intervalMs: probeIntervalMs(line, samples.length) }),
        shapeChanged: shapeChangedRecently(this.shapes.get(line.id), now),
      },
      usage: {
        track: this.usage.get(keyOf(line.id, sample.id)) ?? null,
        peers: peers.map((p) => ({ tier: p.tier, track: this.usage.get(keyOf(p.id, sample.id)) ?? null })),
      },
    };
  }

  /** Route mates that speak the same protocol and name the same model: the lines a line's answers are compared with. */
  private peersOf(snapshot: RegistrySnapshot, line: CachedLine): CachedLine[] {
    if (this.peers?.snapshot !== snapshot) this.peers = { snapshot, byLine: new Map() };
    let found = this.peers.byLine.get(line.id);
    if (!found) {
      const routes = new Set(line.routes.map((r) => r.route));
      found = [...snapshot.lines.values()].filter(
        (l) =>
          l.id !== line.id &&
          l.protocol === line.protocol &&
          l.model === line.model &&
          l.adminState !== "disabled" &&
          l.routes.some((r) => routes.has(r.route)),
      );
      this.peers.byLine.set(line.id, found);
    }
    return found;
  }
}

function setOrDelete<T>(map: Map<string, T>, key: string, value: T | null): void {
  if (value === null) map.delete(key);
  else map.set(key, value);
}
