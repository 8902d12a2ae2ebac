import cron, { type ScheduledTask } from "node-cron";
import type { Engine } from "./engine";

/**
 * node-cron wiring only. Every second: send the probes that are due and apply time-driven health
 * transitions; every 10 s: reconcile the schedule with the registry; every 10 min: retention.
 * `noOverlap` keeps a slow tick (a dead database) from piling up behind itself.
 */
export function startScheduler(engine: Engine): { stop(): Promise<void> } {
  const log = (job: string) => (error: unknown) => engine.deps.logger.warn(`${job} failed; retrying on the next tick`, { error: String(error) });
  const tasks: ScheduledTask[] = [
    cron.schedule("* * * * * *", () => engine.tick().catch(log("probe tick")), { noOverlap: true, name: "probe-tick" }),
    cron.schedule("*/10 * * * * *", () => engine.prober.reconcile().catch(log("schedule reconcile")), { noOverlap: true, name: "reconcile" }),
    cron.schedule("17 */10 * * * *", () => engine.pruneProbeResults().catch(log("retention")), { noOverlap: true, name: "retention" }),
  ];
  return {
    stop: async () => {
      for (const t of tasks) await t.destroy();
    },
  };
}
