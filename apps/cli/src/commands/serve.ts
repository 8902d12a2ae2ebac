import type { Command } from "../command";

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
      // The control plane's composition root reads process.env (its one reader, config.ts) and --demo from argv.
      if (v.port !== undefined) process.env.PORT = v.port;
      if (v.host !== undefined) process.env.HOST = v.host;
      if (v["data-dir"] !== undefined) process.env.LINEWATCH_DATA_DIR = v["data-dir"];
      if (v.demo && !process.argv.includes("--demo")) process.argv.push("--demo");
      await import("../../../control-plane/src/main");
    },
  },
];
