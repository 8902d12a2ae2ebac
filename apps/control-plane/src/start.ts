// Starting the control plane from its configuration: what `npm start` (main.ts) and `linewatch serve`
// both run. The database is opened (embedded PGlite or PostgreSQL), the secret key found or made, the
// control plane served, the demo started when asked.
import { createDb, type Database } from "@linewatch/db";
import type { Config } from "./config";
import { type Demo, startDemo } from "./demo";
import { type AppDeps, systemClock } from "./deps";
import { createLogger, type Logger } from "./logger";
import { createSecretBox, loadOrCreateSecretKey } from "./secrets";
import { type ControlPlane, serveControlPlane } from "./server";

export interface StartOptions {
  /** Four simulated lines on the route chat-default, one of them going bad after two minutes (`npm start`). */
  demo?: boolean;
  /** Where the start-up banner goes, a line at a time (default: nowhere). */
  print?: (line: string) => void;
}

export interface RunningControlPlane {
  url: string;
  controlPlane: ControlPlane;
  database: Database;
  demo: Demo | null;
  logger: Logger;
  /** Stops the demo, the control plane and the database, in that order. */
  stop(): Promise<void>;
}

export async function startControlPlane(config: Config, opts: StartOptions = {}): Promise<RunningControlPlane> {
  // What this process creates (data directory, secret key file, router table files) is the owner's alone.
  process.umask(0o077);
  const logger = createLogger(config.logLevel);
  const database = await createDb({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    onDataDirModesFixed: (dir, fixed) =>
      logger.warn("data directory was readable by others; made it owner-only (0700/0600)", { dir, fixed }),
  });
  const secrets = createSecretBox(config.secretKey ?? loadOrCreateSecretKey(config.dataDir, logger), config.secretKeyPrevious);
  const deps: AppDeps = { config, database, clock: systemClock, logger, secrets };
  const cp = await serveControlPlane(deps);
  const demo = opts.demo ? await startDemo(deps, cp.services) : null;
  if (opts.print) await printBanner(opts.print, deps, cp, demo);
  return {
    url: cp.url,
    controlPlane: cp,
    database,
    demo,
    logger,
    stop: async () => {
      await demo?.stop();
      await cp.close();
      await database.close();
    },
  };
}

async function printBanner(out: (line: string) => void, deps: AppDeps, cp: ControlPlane, demo: Demo | null): Promise<void> {
  const { config, database } = deps;
  out("");
  out(`linewatch control plane: ${cp.url}`);
  out(`  API docs      ${cp.url}/docs`);
  out(`  tables        ${cp.url}/v1/tables`);
  out(`  database      ${database.driver === "pglite" ? `embedded PGlite in ${config.dataDir}` : "PostgreSQL (DATABASE_URL)"}`);
  if (demo) {
    out(`  demo          four simulated lines on route "chat-default" (lab at ${demo.lab.url}); free-b goes bad after 2 minutes`);
    out(`                watch it: curl ${cp.url}/v1/tables/chat-default   or   curl ${cp.url}/v1/events`);
  }
  if (await cp.services.tokens.isOpen()) {
    out("");
    out("  !! NO API TOKENS: the API is open to anyone who can reach it. Create an admin token");
    out("  !! (npx linewatch tokens create admin --role admin) or set LINEWATCH_ADMIN_TOKEN before exposing it.");
  }
  out("");
}

/** Resolves at the first SIGINT or SIGTERM, with its name; later ones are ignored while the process stops. */
export function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.on("SIGINT", resolve);
    process.on("SIGTERM", resolve);
  });
}
