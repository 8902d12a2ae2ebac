// Where each (line, sample) probes within its interval (docs/tables.md#probe-frequency): a phase, the
// fraction of the interval its slots sit at. Slots are aligned to the epoch (slot k of interval I at
// k·I + phase·I), so the cadence follows from the phase and the interval alone: it survives restarts,
// and fast probing (a shorter interval) keeps each sample at the same fraction of its own, shorter,
// interval. Distinct phases stay distinct slots at any interval, and the spread cadence returns when
// fast probing ends: no sample is ever pulled onto another's slot.

/** A phase for each of a line's samples: `start` + k / n, wrapped into [0, 1), in slot order. */
export function samplePhases(start: number, samplesPerCycle: number): number[] {
  const s = Number.isFinite(start) ? start - Math.floor(start) : 0;
  const out: number[] = [];
  for (let k = 0; k < samplesPerCycle; k++) out.push(wrap(s + k / samplesPerCycle));
  return out;
}

/** The phase a time sits at within an interval: what a schedule row stored before phases had. */
export function phaseAt(at: number, intervalMs: number): number {
  if (!validInterval(intervalMs)) return 0;
  return wrap((((at % intervalMs) + intervalMs) % intervalMs) / intervalMs);
}

/** A phase's offset (ms) within an interval: distinct phases give distinct offsets while they differ by at least 1 ms of it. */
export function slotOffsetMs(phase: number, intervalMs: number): number {
  // A phase k / I times I lands a hair under k in floating point: the slack keeps it at k ms.
  return Math.min(Math.floor(wrap(phase) * intervalMs + OFFSET_SLACK_MS), Math.max(0, Math.ceil(intervalMs) - 1));
}

/** Far below a millisecond, far above the rounding of a phase times any interval the schedule holds (≤ 365 days). */
export const OFFSET_SLACK_MS = 1e-4;

/** The first slot of `phase` at or after `at` (ms since the epoch). */
export function slotAtOrAfter(at: number, phase: number, intervalMs: number): number {
  if (!validInterval(intervalMs)) return at;
  const offset = slotOffsetMs(phase, intervalMs);
  return offset + Math.ceil((at - offset) / intervalMs) * intervalMs;
}

/** The first slot of `phase` strictly after `at`. */
export function slotAfter(at: number, phase: number, intervalMs: number): number {
  return slotAtOrAfter(at + 1, phase, intervalMs);
}

const validInterval = (ms: number): boolean => Number.isFinite(ms) && ms >= 1;
/** Into [0, 1), float dust included (1 − ε wraps to 0 only when it rounds there). */
const wrap = (x: number): number => {
  const f = x - Math.floor(x);
  return f >= 1 ? 0 : f;
};
