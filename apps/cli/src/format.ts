// Human-readable output: aligned columns, short times; colours only on a terminal (output is often
// piped), for the states and scores of lines.
import type { ScoreTone, StatusTone } from "@linewatch/core";

const ESC = String.fromCharCode(27);
const ANSI_CODES = new RegExp(`${ESC}\\[[0-9;]*m`, "g");
const visibleLength = (s: string) => s.replace(ANSI_CODES, "").length;

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: string[], rows: (string | number | null | undefined)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null || c === undefined || c === "" ? "-" : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => visibleLength(r[i] ?? ""))));
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c + " ".repeat(Math.max(0, (widths[i] ?? 0) - visibleLength(c)))))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** `key  value` lines, keys aligned. */
export function fields(pairs: [string, string | number | boolean | null | undefined][]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${v === null || v === undefined || v === "" ? "-" : String(v)}`).join("\n");
}

export const fixed = (n: number | null | undefined, digits = 1) => (n === null || n === undefined ? "-" : n.toFixed(digits));

/** "3s ago", "12m ago", "5h ago", "2d ago" (or "in 4m" for the future). */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "-";
  const ms = now - Date.parse(iso);
  const future = ms < 0;
  const s = Math.round(Math.abs(ms) / 1000);
  const text =
    s < 90 ? `${s}s` : s < 90 * 60 ? `${Math.round(s / 60)}m` : s < 36 * 3600 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86400)}d`;
  return future ? `in ${text}` : `${text} ago`;
}

/** 2026-11-29 21:00:05 (UTC), compact enough for a table column. */
export const timestamp = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;

export const truncate = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

export const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();

/** The terminal colour of a line's tone (core lineStatus) or of its score (core scoreTone), as the dashboard shows them. */
const COLOURS: Record<StatusTone | ScoreTone, string> = {
  ok: "32",
  good: "32",
  warn: "33",
  degraded: "33",
  bad: "31",
  down: "31",
  recovering: "34",
  unjudged: "35",
  off: "2",
  none: "2",
};

export const paint = (text: string, tone: StatusTone | ScoreTone, color: boolean) =>
  color ? `${ESC}[${COLOURS[tone]}m${text}${ESC}[0m` : text;
