// The order a line's samples take their slots in (sampleOffsetsMs spaces slots evenly in that
// order): the golden samples spread among the fingerprint ones, so that a fault every golden
// sample sees is still met within interval / golden samples. In list order, 4 golden samples before
// 10 fingerprint ones would take the first 10 s of a 45 s interval and leave a 35 s gap
// (bench/detection/relay.ts: truncation found at a median of 30 s instead of 22 s).

/** `few` spread evenly among `many` (the first of `few` first): [g, f, f, g, f, f, f, g, …]. */
export function interleave<T>(few: readonly T[], many: readonly T[]): T[] {
  if (few.length > many.length) return interleave(many, few);
  const n = few.length + many.length;
  const out: T[] = [];
  let f = 0;
  let m = 0;
  for (let k = 0; k < n; k++) {
    // Slot k holds the next of `few` when it is at or past that one's ideal position, k = i · n / few.length.
    if (f < few.length && k >= Math.ceil((f * n) / few.length)) out.push(few[f++] as T);
    else out.push(many[m++] as T);
  }
  return out;
}
