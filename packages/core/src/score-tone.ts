// How a line's score is shown, one rule for the dashboard and the CLI (STYLE 11).
import type { StatusTone } from "./health/index";
import { PASS_SCORE } from "./scoring/index";

/**
 * The colour of a score: by its value (`good` ≥ 80, `warn` ≥ the pass mark, `bad` below, `none`
 * without probes) while the line is healthy; else the line's tone. A line in cooldown keeps scoring
 * 80–98 on probes that fail a content check: its number must not read as good while it is at weight 0.
 */
export type ScoreTone = "good" | "warn" | "bad" | "none" | Exclude<StatusTone, "ok">;

/** The score a healthy line holds (docs/health.md: degraded below 80). */
const GOOD_SCORE = 80;

export function scoreTone(score: number | null, tone: StatusTone): ScoreTone {
  if (tone !== "ok") return tone;
  if (score === null) return "none";
  return score >= GOOD_SCORE ? "good" : score >= PASS_SCORE ? "warn" : "bad";
}
