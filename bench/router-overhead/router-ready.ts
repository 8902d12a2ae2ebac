// apps/router as main.ts starts it (env config), printing `READY <port>` for profile.ts.
import { loadConfig, startRouter } from "@linewatch/router";
import { silentLogger } from "@linewatch/router-client";

const router = await startRouter({ ...loadConfig(process.env), logger: silentLogger });
process.stdout.write(`READY ${router.port}\n`);
process.once("SIGTERM", () => {
  router.close().then(() => process.exit(0));
});
