import type { HealthEffect } from "@linewatch/core";
import type { EventInsert } from "@linewatch/db";

/** What the shell does with a health effect's event: its row in the timeline (null: the effect is not a row). */
export function healthEventRow(lineId: string, lineName: string, effect: HealthEffect, now: number, dedupeKey: string): EventInsert | null {
  switch (effect.kind) {
    case "state_change":
    case "weight_change":
    case "trend_alert": {
      const { kind, from, to, probeIds } = effect;
      const trend = kind === "trend_alert";
      return {
        at: new Date(now),
        kind,
        lineId,
        routeName: null,
        reason: trend ? effect.detail : `${effect.reason}: ${effect.detail}`,
        data: { line: lineName, from, to, ...(trend ? { windowMs: effect.windowMs } : {}), probeIds },
        dedupeKey,
      };
    }
    // What a relay can fake (docs/scoring.md#what-a-relay-can-fake): which sample moved and how, a
    // changed protocol shape, a usage check that started (or stopped) failing.
    case "fingerprint": {
      const { sampleId, moved, references, anchor, now: latest, probeIds } = effect;
      return {
        at: new Date(now),
        kind: "fingerprint",
        lineId,
        routeName: null,
        reason: effect.detail,
        data: { line: lineName, sampleId, moved, references, anchor, now: latest, probeIds },
        dedupeKey,
      };
    }
    case "shape_change":
      return {
        at: new Date(now),
        kind: "shape_change",
        lineId,
        routeName: null,
        reason: effect.detail,
        data: { line: lineName, from: effect.from, to: effect.to, probeIds: effect.probeIds },
        dedupeKey,
      };
    case "usage":
      return {
        at: new Date(now),
        kind: "usage",
        lineId,
        routeName: null,
        reason: effect.detail,
        data: { line: lineName, sampleId: effect.sampleId, failing: effect.failing, probeIds: effect.probeIds },
        dedupeKey,
      };
    default:
      return null;
  }
}
