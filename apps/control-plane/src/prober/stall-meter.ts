import { performance } from "node:perf_hooks";

/**
 * How long this process could not run (event loop blocked, or the host too busy to schedule it),
 * measured by how late a heartbeat timer fires. A probe's latency minus the stall during it is the
 * upstream's latency, not ours: a busy control plane must not make a healthy line look slow.
 *
 * The heartbeat runs only while a probe is in flight (`begin`/`end`): a 25 ms timer costs about 1%
 * of a core on a small VM even when nothing happens, and a stall matters only during a probe.
 */
export class StallMeter {
  private stalledMs = 0;
  private last = performance.now();
  private timer: NodeJS.Timeout | null = null;
  private users = 0;

  constructor(private readonly periodMs = 25) {}

  /** A probe starts: run the heartbeat (if it is not running already). */
  begin(): void {
    if (this.users++ > 0) return;
    this.last = performance.now();
    this.timer = setInterval(() => this.beat(), this.periodMs);
    this.timer.unref();
  }

  /** A probe ended: stop the heartbeat when it was the last one. */
  end(): void {
    if (this.users === 0 || --this.users > 0) return;
    this.beat();
    this.halt();
  }

  private beat(): void {
    const now = performance.now();
    const late = now - this.last - this.periodMs;
    if (late > 0) this.stalledMs += late;
    this.last = now;
  }

  /** Stalled milliseconds so far (a reading; only differences between two readings mean anything). */
  reading(): number {
    if (!this.timer) return this.stalledMs;
    const late = performance.now() - this.last - this.periodMs;
    return this.stalledMs + Math.max(0, late);
  }

  stop(): void {
    this.users = 0;
    this.halt();
  }

  private halt(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
