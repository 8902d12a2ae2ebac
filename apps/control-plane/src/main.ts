import { loadConfig } from "./config";
import { startControlPlane, untilStopSignal } from "./start";

// Composition root: the one place that reads the environment and the command line; the rest is
// startControlPlane (start.ts), which `linewatch serve` calls too.
async function main() {
  const config = loadConfig(process.env);
  const cp = await startControlPlane(config, { demo: process.argv.includes("--demo"), print: (s) => process.stdout.write(`${s}\n`) });
  const signal = await untilStopSignal();
  cp.logger.info("shutting down", { signal });
  await cp.stop();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`linewatch: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
