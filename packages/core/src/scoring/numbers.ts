/** Into [0, 1]; NaN counts as 0 so a bad input can never raise a score. */
export function clamp01(x: number): number {
  if (Number.isNaN(x)) return 0;
  return Math.min(1, Math.max(0, x));
}

export function roundTo(x: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(x * f) / f;
}

/** A usable positive expectation, or null (absent, zero, negative, NaN, infinite). */
export function positiveOrNull(x: number | null | undefined): number | null {
  return typeof x === "number" && Number.isFinite(x) && x > 0 ? x : null;
}

export function fmt(x: number): string {
  return String(Math.round(x));
}
