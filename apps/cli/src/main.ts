// The `linewatch` command (bin/linewatch.mjs loads this through tsx).
import { run } from "./run";

const code = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stderrIsTTY: process.stderr.isTTY === true,
  env: process.env,
  cwd: process.cwd(),
  isTTY: process.stdout.isTTY === true,
}).catch((error: unknown) => {
  process.stderr.write(`linewatch: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 1;
});
process.exitCode = code;
