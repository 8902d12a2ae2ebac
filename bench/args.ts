// The options of a benchmark script. `--help` prints the script's opening comment (each script
// starts with what it measures and how to run it), and an unknown or malformed option names itself
// and exits 2 instead of ending in a stack trace.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type ParseArgsConfig, parseArgs } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** The comment lines a script opens with, without their `//`. */
export function usageOf(scriptUrl: string): string {
  const lines: string[] = [];
  for (const line of readFileSync(fileURLToPath(scriptUrl), "utf8").split("\n")) {
    if (!line.startsWith("//")) break;
    lines.push(line.replace(/^\/\/ ?/, ""));
  }
  return `${lines.join("\n")}\n`;
}

/** Parse `process.argv` with these options (strict), answering `--help` / `-h` from `scriptUrl`'s opening comment. */
export function benchArgs<const T extends Options>(scriptUrl: string, options: T) {
  const argv = process.argv.slice(2);
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(usageOf(scriptUrl));
    process.exit(0);
  }
  try {
    return parseArgs({ args: argv, options }).values;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\nUsage (--help):\n${usageOf(scriptUrl)}`);
    process.exit(2);
  }
}
