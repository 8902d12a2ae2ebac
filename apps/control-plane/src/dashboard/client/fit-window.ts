// Where a time chart's x axis starts. A chart of the last 6 h on a control plane that started two
// minutes ago would draw its data as a sliver at the right edge; it opens on the data that exists
// instead, and on the whole chosen window once the data reaches back that far. Pure (no DOM): the
// dashboard script and the fast tests both import it.

/** A fitted chart spans at least this much, so a first probe seconds ago is not drawn across the whole width. */
export const MIN_SPAN_MS = 2 * 60_000;

/**
 * The x axis's start for a window [windowStart, end] whose earliest data is at `firstAt` (null: no
 * data): `marginMs` before the first data, at least MIN_SPAN_MS before `end`, never before
 * `windowStart` (the chosen window is the most a chart shows).
 */
export function fitStart(windowStart: number, end: number, firstAt: number | null, marginMs = 0): number {
  if (firstAt === null || !Number.isFinite(firstAt) || firstAt <= windowStart) return windowStart;
  return Math.max(windowStart, Math.min(firstAt - Math.max(0, marginMs), end - MIN_SPAN_MS));
}

/** The first bucket (index) in which any series has a value; null when none has. */
export function firstFilledBucket(series: readonly (readonly (number | null)[])[]): number | null {
  let first: number | null = null;
  for (const values of series) {
    const i = values.findIndex((v) => v !== null);
    if (i >= 0 && (first === null || i < first)) first = i;
  }
  return first;
}
