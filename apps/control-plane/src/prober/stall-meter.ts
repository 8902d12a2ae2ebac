import { performance } from "node:perf_hooks";

/**
 * How long this process could not run (event loop blocked, or the host too busy to schedule it),
 * measured by how late a heartbeat timer fires. A probe's latency minus the stall during it is the
 * upstream's latency, not ours: a busy control plane must not make a healthy line look slow.
 */
export class StallMeter {
  private stalledMs = 0;
  private last = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly periodMs = 25) {
    this.timer = setInterval(() => this.beat(), periodMs);
    this.timer.unref();
  }

  private beat(): void {
    const now = performance.now();
    const late = now - this.last - this.periodMs;
    if (late > 0) this.stalledMs += late;
    this.last = now;
  }

  /** Stalled milliseconds so far (a reading; only differences between two readings mean anything). */
  reading(): number {
    const late = performance.now() - this.last - this.periodMs;
    return this.stalledMs + Math.max(0, late);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
