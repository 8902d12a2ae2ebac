// Composition root: env → config → router-client + undici + Hono → listen. Stops on SIGINT/SIGTERM.
import { jsonLineLogger } from "@linewatch/router-client";
import { ConfigError, loadConfig } from "./config";
import { startRouter } from "./server";

const logger = jsonLineLogger;
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
} catch (e) {
  if (e instanceof ConfigError) {
    logger.error(`router: ${e.message}`);
    process.exit(2);
  }
  throw e;
}
if (config.token === null) logger.warn("router: LINEWATCH_TOKEN is not set; lines will carry no credentials");

const router = await startRouter({ ...config, logger });
logger.info("router: listening", {
  url: router.url,
  controlPlane: config.controlPlaneUrl,
  routes: router.client.routes(),
  ready: router.client.ready(),
});

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info("router: stopping", { signal });
  // In-flight streams get a grace period, then the process exits regardless.
  setTimeout(() => process.exit(0), 10_000).unref();
  router.close().then(
    () => process.exit(0),
    (e: unknown) => {
      logger.error("router: error while stopping", { error: String(e) });
      process.exit(1);
    },
  );
};
process.once("SIGINT", () => stop("SIGINT"));
process.once("SIGTERM", () => stop("SIGTERM"));
