import { errorSummary } from "@linewatch/db";
import cron, { type ScheduledTask } from "node-cron";
import type { Engine } from "./engine";
import type { Logger } from "./logger";

/**
 * A job's failures, logged once when they start and once when they end: a database outage makes
 * the probe tick fail every second, and one line per second says nothing the first did not.
 */
function failureLog(logger: Logger, now: () => number, job: string) {
  let failingSince: number | null = null;
  let failures = 0;
  return {
    ok: () => {
      if (failingSince === null) return;
      logger.info(`${job} recovered`, { failures, failingForMs: now() - failingSince });
      failingSince = null;
      failures = 0;
    },
    failed: (error: unknown) => {
      failures++;
      if (failingSince !== null) return logger.debug(`${job} failed again`, { failures, ...errorSummary(error) });
      failingSince = now();
      logger.warn(`${job} failed; retrying on the next tick`, errorSummary(error));
    },
  };
}

/** node-cron's own messages (an overlapping or missed run) into our log, not onto stderr. */
const cronLogger = (logger: Logger) => ({
  info: (message: string) => logger.debug(`node-cron: ${message}`),
  warn: (message: string) => logger.debug(`node-cron: ${message}`),
  error: (message: string | Error, err?: Error) => logger.error(`node-cron: ${String(message)}`, err ? { error: String(err) } : {}),
  debug: (message: string | Error) => logger.debug(`node-cron: ${String(message)}`),
});

/**
 * node-cron wiring only. Every second: send the probes that are due and apply time-driven health
 * transitions, and (a job of its own) fan webhook events out and start their deliveries; every 2 s: this replica's heartbeat (and the release of dead replicas' claims); every 10 s: reconcile the schedule with the registry; every minute: vacuum the
 * embedded database's rewritten tables (PGlite has no autovacuum); every 10 min: retention.
 * `noOverlap` keeps a slow tick (a dead database) from piling up behind itself.
 */
export function startScheduler(engine: Engine): { stop(): Promise<void> } {
  const logger = engine.deps.logger;
  const job = (name: string, expression: string, run: () => Promise<unknown>) => {
    const log = failureLog(logger, () => engine.deps.clock.now(), name);
    return cron.schedule(expression, () => run().then(log.ok, log.failed), { noOverlap: true, name, logger: cronLogger(logger) });
  };
  const tasks: ScheduledTask[] = [
    job("probe tick", "* * * * * *", () => engine.tick()),
    job("schedule reconcile", "*/10 * * * * *", () => engine.prober.reconcile()),
    // Its own job, so a slow probe tick never makes a live replica look dead to the others.
    job("replica heartbeat", "*/2 * * * * *", () => engine.prober.heartbeat()),
    // Its own job: a webhook receiver, however slow, never holds up a probe tick (and a tick only starts sends).
    job("webhook deliveries", "* * * * * *", () => engine.webhooks.tick()),
    job("retention", "17 */10 * * * *", async () => {
      await engine.pruneProbeResults();
      await engine.pruneLineOutcomes();
      await engine.pruneWebhookDeliveries();
    }),
    job("embedded vacuum", "41 * * * * *", () => engine.vacuumEmbedded()),
  ];
  return {
    stop: async () => {
      for (const t of tasks) await t.destroy();
    },
  };
}
