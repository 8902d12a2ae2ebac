// Issue 27 item 2a: does fast probing bunch a line's samples onto one slot? A line's samples spread
// across its interval; a trend alert at a random moment halves the interval for 15 min; then back.
// Before: pending probes came forward by the interval's saving, clamped to now (setFastProbing), and
// each next slot was the last + the interval. After: each sample keeps its phase (core slots.ts).
// Counts, over random lines and alert times, the probes of one line that share a slot (within 1 s)
// during fast probing and in the hour after it, and the smallest gap between two of its probes.
//   npx tsx bench/cadence/bunching.ts [trials]
import { mulberry32, samplePhases, slotAfter, slotAtOrAfter } from "../../packages/core/src/index";

const trials = Number(process.argv[2] ?? 1000);
const FAST_MS = 15 * 60_000;
const AFTER_MS = 60 * 60_000;

interface Row {
  next: number;
  phase: number;
}

function simulate(before: boolean, samples: number, interval: number, rng: () => number) {
  const fast = Math.ceil(interval / 2);
  const start = Math.floor(rng() * interval) / interval;
  const phases = samplePhases(start, samples);
  const t0 = 1_800_000_000_000;
  const rows: Row[] = phases.map((phase) => ({ phase, next: slotAtOrAfter(t0, phase, interval) }));
  const alertAt = t0 + Math.floor(rng() * 10 * interval);
  const fastUntil = alertAt + FAST_MS;
  const end = fastUntil + AFTER_MS;
  const sent: number[] = [];
  let alerted = false;
  for (;;) {
    const row = rows.reduce((a, b) => (b.next < a.next ? b : a));
    if (!alerted && row.next > alertAt) {
      alerted = true;
      for (const r of rows) r.next = before ? Math.max(alertAt, r.next - (interval - fast)) : slotAtOrAfter(alertAt, r.phase, fast);
      continue;
    }
    if (row.next >= end) break;
    const at = row.next;
    if (at >= alertAt) sent.push(at);
    const step = at < fastUntil ? fast : interval;
    row.next = before ? at + step : slotAfter(at, row.phase, step);
  }
  sent.sort((a, b) => a - b);
  const count = (from: number, to: number) => {
    const xs = sent.filter((t) => t >= from && t < to);
    let bunched = 0;
    let minGap = Number.POSITIVE_INFINITY;
    for (let k = 1; k < xs.length; k++) {
      const gap = (xs[k] as number) - (xs[k - 1] as number);
      minGap = Math.min(minGap, gap);
      if (gap < 1_000) bunched++;
    }
    return { bunched, minGap };
  };
  return { fast: count(alertAt, fastUntil), after: count(fastUntil + interval, end) };
}

for (const [samples, interval] of [
  [4, 45_000],
  [14, 45_000],
  [4, 15_000],
] as const) {
  for (const before of [true, false]) {
    const rng = mulberry32(27);
    let lines = 0;
    let fastBunched = 0;
    let afterBunched = 0;
    let fastMin = Number.POSITIVE_INFINITY;
    let afterMin = Number.POSITIVE_INFINITY;
    for (let i = 0; i < trials; i++) {
      const r = simulate(before, samples, interval, rng);
      if (r.fast.bunched > 0 || r.after.bunched > 0) lines++;
      fastBunched += r.fast.bunched;
      afterBunched += r.after.bunched;
      fastMin = Math.min(fastMin, r.fast.minGap);
      afterMin = Math.min(afterMin, r.after.minGap);
    }
    console.log(
      `${before ? "before" : "after "} ${samples} samples, ${interval / 1000} s: lines with probes on one slot ${((100 * lines) / trials).toFixed(1)}%; ` +
        `pairs within 1 s per line: fast ${(fastBunched / trials).toFixed(2)}, the hour after ${(afterBunched / trials).toFixed(2)}; ` +
        `smallest gap: fast ${fastMin} ms, after ${afterMin} ms (spread: ${Math.floor(interval / samples / 2)} / ${Math.floor(interval / samples)} ms)`,
    );
  }
}
