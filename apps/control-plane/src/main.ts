import { createDb } from "@linewatch/db";
import { loadConfig } from "./config";
import { startDemo } from "./demo";
import { systemClock } from "./deps";
import { createLogger } from "./logger";
import { createSecretBox, loadOrCreateSecretKey } from "./secrets";
import { startControlPlane } from "./server";

// Composition root: the one place that reads the environment and owns the clock.
async function main() {
  // What this process creates (data directory, secret key file, router table files) is the owner's alone.
  process.umask(0o077);
  const demo = process.argv.includes("--demo");
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  const database = await createDb({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    onDataDirModesFixed: (dir, fixed) =>
      logger.warn("data directory was readable by others; made it owner-only (0700/0600)", { dir, fixed }),
  });
  const secretKey = config.secretKey ?? loadOrCreateSecretKey(config.dataDir, logger);
  const secrets = createSecretBox(secretKey, config.secretKeyPrevious);
  const deps = { config, database, clock: systemClock, logger, secrets };
  const cp = await startControlPlane(deps);
  const lab = demo ? await startDemo(deps, cp.engine) : null;

  const out = (s: string) => process.stdout.write(`${s}\n`);
  out("");
  out(`linewatch control plane: ${cp.url}`);
  out(`  API docs      ${cp.url}/docs`);
  out(`  tables        ${cp.url}/v1/tables`);
  out(`  database      ${database.driver === "pglite" ? `embedded PGlite in ${config.dataDir}` : "PostgreSQL (DATABASE_URL)"}`);
  if (lab) {
    out(`  demo          four simulated lines on route "chat-default" (lab at ${lab.lab.url}); free-b goes bad after 2 minutes`);
    out(`                watch it: curl ${cp.url}/v1/tables/chat-default   or   curl ${cp.url}/v1/events`);
  }
  if (await cp.services.tokens.isOpen()) {
    out("");
    out("  !! NO API TOKENS: the API is open to anyone who can reach it. Create an admin token");
    out("  !! (npx linewatch tokens create admin --role admin) or set LINEWATCH_ADMIN_TOKEN before exposing it.");
  }
  out("");

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("shutting down", { signal });
    await lab?.stop();
    await cp.close();
    await database.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: unknown) => {
  process.stderr.write(`linewatch: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
