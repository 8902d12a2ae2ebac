// apps/router with every route, the proxied ones included, going through Hono (fastPath off):
// shows what the direct Node path saves. Same env as apps/router/src/main.ts.
import { loadConfig, startRouter } from "@linewatch/router";
import { silentLogger } from "@linewatch/router-client";

const router = await startRouter({ ...loadConfig(process.env), fastPath: false, logger: silentLogger });
process.stdout.write(`READY ${router.port}\n`);
process.once("SIGTERM", () => {
  router.close().then(() => process.exit(0));
});
