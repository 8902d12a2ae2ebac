import type { Lab } from "@linewatch/lab";
import type { TestControlPlane } from "./control-plane";
import type { ManualClock } from "./manual-clock";

/** [line, lab mode, from minute, to minute] */
export type FaultWindow = readonly [string, Parameters<Lab["setMode"]>[1], number, number];

const MIN = 60_000;

/**
 * A recorded history for the replay's tests: the real scheduler and prober against the lab under a
 * manual clock, a tick every `stepMs` for `spanMs`, each fault window switching its line's lab mode
 * on and back to "ok". Returns the range it covers.
 */
export async function recordHistory(
  cp: TestControlPlane,
  lab: Lab,
  clock: ManualClock,
  opts: { spanMs: number; stepMs: number; faults: readonly FaultWindow[]; warmUpMs?: number },
): Promise<{ from: number; to: number }> {
  // New lines first earn their weight (docs/health.md#new-lines): the history starts once each has
  // been probed with every sample, so a replay of it starts from lines in service, as they were.
  const warmUp = opts.warmUpMs ?? 0;
  for (let t = 0; t < warmUp; t += opts.stepMs) {
    await cp.engine.tick();
    await cp.engine.prober.drain();
    clock.set(clock.now() + opts.stepMs);
  }
  const start = clock.now();
  for (let t = 0; t < opts.spanMs; t += opts.stepMs) {
    for (const [line, mode, a, b] of opts.faults) {
      if (t === a * MIN) lab.setMode(line, mode);
      if (t === b * MIN) lab.setMode(line, "ok");
    }
    clock.set(start + t);
    await cp.engine.tick();
    await cp.engine.prober.drain();
  }
  return { from: start + 1, to: start + opts.spanMs };
}
