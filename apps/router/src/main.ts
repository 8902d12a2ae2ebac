// Composition root: env → config → router-client + undici + Hono → listen. Stops on SIGINT/SIGTERM.
import { resolve } from "node:path";
import { jsonLineLogger } from "@linewatch/router-client";
import { ConfigError, loadConfig } from "./config";
import { RouterTokenError, type RunningRouter, startRouter } from "./server";

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
if (config.token === null) {
  logger.warn(
    "router: LINEWATCH_TOKEN is not set: a control plane that has tokens answers 401 to every table pull and outcome report (the router then serves only its cache file), and an open one gives tables without the lines' credentials; create a token with: npx linewatch tokens create <name> --role router",
  );
}

let router: RunningRouter;
try {
  router = await startRouter({ ...config, logger });
} catch (e) {
  if (e instanceof RouterTokenError) {
    logger.error(`router: ${e.message}`);
    process.exit(2);
  }
  throw e;
}
logger.info("router: listening", {
  url: router.url,
  controlPlane: config.controlPlaneUrl,
  routes: router.client.routes(),
  ready: router.client.ready(),
  routerId: config.routerId,
  // Relative paths are relative to the working directory (with `npm start -w`, apps/router/).
  cacheFile: config.cacheFile === null ? "none (memory only)" : resolve(config.cacheFile),
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
