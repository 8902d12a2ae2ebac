import { describeOptions, GLOBAL_OPTIONS, type OptionName, parseCommandLine } from "./args";
import type { Command } from "./command";
import { applyCommands } from "./commands/apply";
import { eventCommands } from "./commands/events";
import { healthCommands } from "./commands/health";
import { lineCommands } from "./commands/lines";
import { replayCommands } from "./commands/replay";
import { routeCommands } from "./commands/routes";
import { sampleCommands } from "./commands/samples";
import { serveCommands } from "./commands/serve";
import { tableCommands } from "./commands/tables";
import { tokenCommands } from "./commands/tokens";
import { webhookCommands } from "./commands/webhooks";
import { Context, type Io } from "./context";
import { CliError, EXIT, UsageError } from "./errors";

export const VERSION = "0.1.0";

export const COMMANDS: Command[] = [
  ...serveCommands,
  ...lineCommands,
  ...sampleCommands,
  ...routeCommands,
  ...healthCommands,
  ...tableCommands,
  ...eventCommands,
  ...replayCommands,
  ...tokenCommands,
  ...webhookCommands,
  ...applyCommands,
];

const GROUPS = [...new Set(COMMANDS.flatMap((c) => (c.name.includes(" ") ? c.name.split(" ", 1) : [])))];

function usageLine(c: Command): string {
  const opts = (c.options ?? []).length > 0 ? " [options]" : "";
  return `linewatch ${c.name}${c.args ? ` ${c.args}` : ""}${opts}`;
}

export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => `${c.name}${c.args ? ` ${c.args}` : ""}`.length));
  return [
    "linewatch: probe LLM upstream lines with golden samples, score their answers, publish weight tables.",
    "",
    "usage: linewatch COMMAND [ARGS] [options]",
    "",
    "commands:",
    ...COMMANDS.map((c) => `  ${`${c.name}${c.args ? ` ${c.args}` : ""}`.padEnd(width)}  ${c.summary}`),
    "",
    "options of every command:",
    describeOptions(GLOBAL_OPTIONS),
    "",
    "Lines and samples are named by name or id. `linewatch COMMAND --help` shows a command's options.",
    "Exit codes: 0 ok, 1 the API refused (or a file is invalid), 2 usage error, 3 control plane unreachable.",
  ].join("\n");
}

export function commandHelp(c: Command): string {
  return [
    `usage: ${usageLine(c)}`,
    "",
    c.summary,
    ...(c.details ? ["", c.details] : []),
    ...((c.options ?? []).length > 0 ? ["", "options:", describeOptions(c.options ?? [])] : []),
    "",
    "options of every command:",
    describeOptions(GLOBAL_OPTIONS),
  ].join("\n");
}

/** The command named by the first one or two positionals. */
function findCommand(positionals: string[]): { command: Command; args: string[] } | null {
  const two = positionals.slice(0, 2).join(" ");
  const byTwo = COMMANDS.find((c) => c.name === two);
  if (byTwo) return { command: byTwo, args: positionals.slice(2) };
  const byOne = COMMANDS.find((c) => c.name === positionals[0]);
  return byOne ? { command: byOne, args: positionals.slice(1) } : null;
}

function printError(io: Io, error: CliError, json: boolean): void {
  if (json) {
    io.stderr(`${JSON.stringify({ error: { code: error.code, message: error.message, details: error.details } })}\n`);
    return;
  }
  const lines = [`linewatch: ${error.message}`];
  // The message already names the first field; list them all when there are several.
  if (error.details.length > 1 || (error.details[0] && !error.message.includes(error.details[0].message))) {
    for (const d of error.details) lines.push(`  ${d.field ? `${d.field}: ` : ""}${d.message}`);
  }
  io.stderr(`${lines.join("\n")}\n`);
}

/** Run one command line; resolves to the exit code. */
export async function run(argv: string[], io: Io): Promise<number> {
  let json = argv.includes("--json");
  try {
    const parsed = parseCommandLine(argv);
    json = parsed.values.json === true;
    if (parsed.values.version) {
      io.stdout(`${VERSION}\n`);
      return EXIT.ok;
    }
    if (parsed.positionals.length === 0) {
      if (parsed.values.help) {
        io.stdout(`${mainHelp()}\n`);
        return EXIT.ok;
      }
      if (argv.length === 0) {
        io.stderr(`${mainHelp()}\n`);
        return EXIT.usage;
      }
      throw new UsageError("no command given (see linewatch --help)");
    }
    if (parsed.positionals[0] === "help") {
      const found = findCommand(parsed.positionals.slice(1));
      io.stdout(`${found ? commandHelp(found.command) : mainHelp()}\n`);
      return EXIT.ok;
    }
    const found = findCommand(parsed.positionals);
    if (!found) {
      const group = parsed.positionals[0];
      if (group === undefined) throw new Error("no positionals: handled above, before looking for a command");
      if (GROUPS.includes(group)) {
        const subs = COMMANDS.filter((c) => c.name.startsWith(`${group} `)).map((c) => c.name.split(" ")[1]);
        throw new UsageError(
          parsed.positionals[1] === undefined
            ? `${group}: which one? ${subs.join(", ")}`
            : `${group} ${parsed.positionals[1]}: unknown command (${group} ${subs.join("|")})`,
        );
      }
      throw new UsageError(`unknown command ${JSON.stringify(group)} (see linewatch --help)`);
    }
    const { command, args } = found;
    if (parsed.values.help) {
      io.stdout(`${commandHelp(command)}\n`);
      return EXIT.ok;
    }
    const allowed = new Set<OptionName>([...GLOBAL_OPTIONS, ...(command.options ?? [])]);
    const stray = parsed.given.find((o) => !allowed.has(o));
    if (stray) throw new UsageError(`${command.name}: --${stray} does not apply here (see linewatch ${command.name} --help)`);
    const min = command.min ?? 0;
    const max = command.max ?? 0;
    if (args.length < min) throw new UsageError(`${command.name}: missing ${command.args ?? "arguments"} (usage: ${usageLine(command)})`);
    if (args.length > max)
      throw new UsageError(`${command.name}: unexpected argument ${JSON.stringify(args[max])} (usage: ${usageLine(command)})`);
    await command.run(new Context(io, parsed.values), args);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CliError) {
      printError(io, error, json);
      return error.exitCode;
    }
    throw error;
  }
}
