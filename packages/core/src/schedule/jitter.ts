// Spreading probes: lines start at random points of their interval, and a line's samples are spaced
// evenly across it (a fault that fails one sample is then met within one interval, and one that fails
// every sample within interval / samples).

/** A start offset in [0, intervalMs) for a line, so lines do not all probe at once. */
export function jitterOffsetMs(rng: () => number, intervalMs: number): number {
  if (!(intervalMs > 0) || !Number.isFinite(intervalMs)) return 0;
  const r = Math.min(Math.max(rng(), 0), 1 - Number.EPSILON);
  return Math.floor(r * intervalMs);
}

/** Offsets within a cycle for each of a line's samples: `startMs` + k · interval / n, wrapped into the interval. */
export function sampleOffsetsMs(startMs: number, intervalMs: number, samplesPerCycle: number): number[] {
  const out: number[] = [];
  for (let k = 0; k < samplesPerCycle; k++) {
    out.push(Math.floor((startMs + (k * intervalMs) / samplesPerCycle) % intervalMs));
  }
  return out;
}
