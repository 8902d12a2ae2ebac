import { join } from "node:path";
import { createDb } from "@linewatch/db";
import { loadConfig } from "./config";
import { systemClock } from "./deps";
import { createLogger } from "./logger";
import { createSecretBox, loadOrCreateSecretKey } from "./secrets";
import { startControlPlane } from "./server";

// Composition root: the one place that reads the environment and owns the clock.
async function main() {
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  const database = await createDb({ url: config.databaseUrl, dataDir: config.dataDir });
  const secretKey = config.secretKey ?? loadOrCreateSecretKey(config.dataDir, logger);
  const secrets = createSecretBox(secretKey, config.secretKeyPrevious);
  const deps = { config, database, clock: systemClock, logger, secrets };
  const cp = await startControlPlane(deps);
  logger.info("linewatch control plane listening", { url: cp.url, database: database.driver === "pglite" ? join(config.dataDir) : "postgres" });
  process.stdout.write(`\nlinewatch control plane: ${cp.url}  (API docs: ${cp.url}/docs)\n\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("shutting down", { signal });
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
