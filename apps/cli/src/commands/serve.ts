import type { Command } from "../command";
import { CliError, EXIT } from "../errors";

export const serveCommands: Command[] = [
  {
    name: "serve",
    max: 0,
    summary: "run the control plane here (API, dashboard, prober, scheduler)",
    details:
      "Settings come from the environment (PORT, HOST, DATABASE_URL, LINEWATCH_DATA_DIR, LINEWATCH_ADMIN_TOKEN, ...); the options below override three of them.\nWithout DATABASE_URL the data lives in an embedded PGlite database under LINEWATCH_DATA_DIR.",
    options: ["demo", "port", "host", "data-dir"],
    async run(ctx) {
      const v = ctx.values;
      // Loaded only here: printing a table needs none of the control plane.
      const { loadConfig, startControlPlane, untilStopSignal } = await import("@linewatch/control-plane");
      const env = {
        ...ctx.io.env,
        ...(v.port !== undefined ? { PORT: v.port } : {}),
        ...(v.host !== undefined ? { HOST: v.host } : {}),
        ...(v["data-dir"] !== undefined ? { LINEWATCH_DATA_DIR: v["data-dir"] } : {}),
      };
      // A bad setting, a port in use, a database that will not open: said in a line, exit 1 (as `npm run serve`).
      const cp = await Promise.resolve()
        .then(() => startControlPlane(loadConfig(env), { demo: v.demo === true, print: (line) => ctx.print(line) }))
        .catch((error: unknown) => {
          throw new CliError(error instanceof Error ? error.message : String(error), EXIT.failed, [], "start");
        });
      const signal = await untilStopSignal();
      cp.logger.info("shutting down", { signal });
      await cp.stop();
    },
  },
];
