import { Counter, type Registry } from "prom-client";

/** What the health machine of this replica could not apply (HealthFaults). */
export interface HealthFaultSource {
  unappliedResults: number;
  failSafeCooldowns: number;
}

/** The health machine's faults on this replica: results it could not apply, lines the fail-safe took out. */
export function registerHealthMetrics(registry: Registry, faults: () => HealthFaultSource | undefined): void {
  const faultCounter = (name: string, help: string, read: (f: HealthFaultSource) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const counts = faults();
        this.reset();
        if (counts) this.inc(read(counts));
      },
    });
  faultCounter(
    "linewatch_health_unapplied_results_total",
    "Probe results and live judgments this replica's health machine could not apply (a fault in the health code or a line's record; /readyz names the last).",
    (f) => f.unappliedResults,
  );
  faultCounter(
    "linewatch_health_fail_safe_total",
    "Lines this replica sent to cooldown because a failing result of theirs could not be applied (docs/health.md#fail-safe).",
    (f) => f.failSafeCooldowns,
  );
}
