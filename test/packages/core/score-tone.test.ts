import { type ScoreTone, type StatusTone, scoreTone } from "@linewatch/core";
import { describe, expect, it } from "vitest";

describe("scoreTone", () => {
  const cases: [number | null, StatusTone, ScoreTone][] = [
    [98, "ok", "good"],
    [80, "ok", "good"],
    [79.9, "ok", "warn"],
    [60, "ok", "warn"],
    [59.9, "ok", "bad"],
    [null, "ok", "none"],
    // Not healthy: the line's tone, whatever its probes score (a line in cooldown scoring 98 is out).
    [98, "down", "down"],
    [98, "off", "off"],
    [98, "recovering", "recovering"],
    [98, "degraded", "degraded"],
    [null, "off", "off"],
  ];
  it.each(cases)("score %s, tone %s → %s", (score, tone, expected) => {
    expect(scoreTone(score, tone)).toBe(expected);
  });
});
