// Small text formatters shared by the server views and the browser script (client/dashboard.ts).
import { type StatusTone, scoreTone } from "@linewatch/core";

/** "12 s", "4 min", "3 h", "2 d": how long ago, coarse on purpose. */
export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h`;
  return `${Math.floor(h / 24)} d`;
}

/** "4m 05s", "1h 02m": a time left, precise enough to watch a cooldown run out. */
export function remaining(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, "0")}m`;
  if (m > 0) return `${m}m ${String(sec).padStart(2, "0")}s`;
  return `${sec}s`;
}

/** A table weight (of 10000) as a share. */
export const share = (weight: number) => `${(weight / 100).toFixed(1)}%`;

export const percent = (f: number) => `${Math.round(f * 100)}%`;

export const iso = (ms: number) => new Date(ms).toISOString();

/** A score's CSS class: by its value while the line is healthy, else by the line's tone (core scoreTone). */
export const scoreClass = (score: number | null, tone: StatusTone) => `s-${scoreTone(score, tone)}`;

/** JSON safe inside a <script> element (no `</script>`, no HTML comment openers). */
export const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
