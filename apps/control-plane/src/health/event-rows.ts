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
    default:
      return null;
  }
}
