// The common gateway practice the benchmark compares with: one health check per interval (here the
// line's 4 samples at once, the same budget as linewatch), unhealthy after 2 failed checks in a row,
// healthy again after 2 passed ones. `status`: a check fails only on a timeout, connect error or
// non-2xx; `content`: also when a sample fails its content checks (a plain 2-failures rule).
import { VirtualClock } from "../../test/sim/clock";
import type { SimSample } from "../../test/sim/fleet";
import type { Respond } from "../../test/sim/upstreams";

export interface ThresholdOptions {
  respond: Respond;
  samples: SimSample[];
  start: number;
  /** First check, in [0, interval). */
  offsetMs: number;
  intervalMs?: number;
  verdict: "status" | "content";
  unhealthyThreshold?: number;
  healthyThreshold?: number;
}

export class ThresholdCheck {
  readonly clock: VirtualClock;
  /** Factor (1 healthy, 0 unhealthy) from each change on. */
  readonly factors: Array<{ at: number; factor: number }>;
  probes = 0;
  private fails = 0;
  private passes = 0;
  private factor = 1;

  constructor(private readonly o: ThresholdOptions) {
    this.clock = new VirtualClock(o.start);
    this.factors = [{ at: o.start, factor: 1 }];
    this.schedule(o.start + o.offsetMs);
  }

  runUntil(t: number): void {
    this.clock.runUntil(t);
  }

  private schedule(at: number): void {
    this.clock.at(at, () => {
      this.schedule(at + (this.o.intervalMs ?? 45_000));
      this.check();
    });
  }

  private check(): void {
    const startedAt = this.clock.now;
    let doneAt = startedAt;
    let failed = false;
    for (const s of this.o.samples) {
      this.probes++;
      const out = this.o.respond(s, startedAt, "scheduled");
      const hard = out.hardFailure || out.latencyMs > s.timeoutMs;
      if (hard || (this.o.verdict === "content" && !out.passed)) failed = true;
      doneAt = Math.max(doneAt, startedAt + Math.min(out.latencyMs, s.timeoutMs));
    }
    this.clock.at(doneAt, () => {
      if (failed) {
        this.fails++;
        this.passes = 0;
        if (this.factor === 1 && this.fails >= (this.o.unhealthyThreshold ?? 2)) this.set(0);
      } else {
        this.passes++;
        this.fails = 0;
        if (this.factor === 0 && this.passes >= (this.o.healthyThreshold ?? 2)) this.set(1);
      }
    });
  }

  private set(factor: number): void {
    this.factor = factor;
    this.factors.push({ at: this.clock.now, factor });
  }
}
