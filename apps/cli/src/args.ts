import { parseArgs } from "node:util";
import { DEFAULT_ROUTE_SETTINGS } from "@linewatch/core";
import { UsageError } from "./errors";

/**
 * Every option of every command, in one table so `node:util` parseArgs can read the whole command
 * line at once; each command then says which of them apply to it.
 */
export const OPTIONS = {
  url: { type: "string", arg: "URL", help: "control plane (env LINEWATCH_URL; default http://127.0.0.1:8787)" },
  token: { type: "string", arg: "TOKEN", help: "API token (env LINEWATCH_TOKEN)" },
  json: { type: "boolean", help: "print JSON instead of tables" },
  help: { type: "boolean", short: "h", help: "show help" },
  version: { type: "boolean", help: "print the CLI version" },

  tier: { type: "string", arg: "paid|free", help: "line tier" },
  protocol: { type: "string", arg: "PROTOCOL", help: "openai-chat (default), openai-responses, anthropic-messages or generic-http" },
  "base-url": { type: "string", arg: "URL", help: "upstream base URL, e.g. https://api.openai.com/v1" },
  model: { type: "string", arg: "MODEL", help: "model name sent upstream" },
  "api-key-env": { type: "string", arg: "VAR", help: "read the upstream API key from this environment variable" },
  route: {
    type: "string",
    multiple: true,
    arg: "ROUTE[=WEIGHT]",
    help: "lines: route to join (weight 100 unless given); webhooks: only events of this route; repeatable",
  },
  header: { type: "string", multiple: true, arg: "NAME=VALUE", help: "extra upstream header; repeatable" },
  "probe-interval-sec": { type: "string", arg: "N", help: "probe interval in seconds (default 45)" },
  "timeout-ms": { type: "string", arg: "N", help: "probe timeout in ms" },
  "daily-quota": { type: "string", arg: "N", help: "requests per day the upstream allows" },
  "probe-budget-pct": { type: "string", arg: "N", help: "share of the daily quota probes may spend (default 5)" },
  "max-share": { type: "string", arg: "0-1", help: "most of a route's traffic this line may carry" },
  "admin-state": { type: "string", arg: "STATE", help: "active (default), drained or disabled" },

  file: { type: "string", short: "f", arg: "FILE", help: "YAML or JSON file" },
  prompt: { type: "string", arg: "TEXT", help: "user message of the probe (openai-chat, openai-responses, anthropic-messages)" },
  "max-tokens": { type: "string", arg: "N", help: "max_tokens of the probe request (default 200)" },
  "min-length": { type: "string", arg: "N", help: "expect: at least N characters" },
  "max-length": { type: "string", arg: "N", help: "expect: at most N characters" },
  contains: { type: "string", multiple: true, arg: "TEXT", help: "expect: the answer contains TEXT; repeatable" },
  matches: { type: "string", arg: "REGEX", help: "expect: the answer matches REGEX" },
  answer: { type: "string", arg: "TEXT", help: "expect: the normalized answer is TEXT (correctness)" },
  nonce: { type: "boolean", help: "expect: the answer echoes {{nonce}} (add it to the prompt)" },
  varies: { type: "boolean", help: "expect: answers differ from probe to probe (stale-cache check)" },
  "required-field": {
    type: "string",
    multiple: true,
    arg: "PATH",
    help: "expect: this field is present (content.x = inside a JSON answer); repeatable",
  },
  "max-latency-ms": { type: "string", arg: "N", help: "expect: answered within N ms" },
  weight: { type: "string", arg: "N", help: "weight of the sample in the line score (default 1)" },

  "free-share-cap": {
    type: "string",
    arg: "0-1",
    help: `most of the traffic free lines may carry together (default ${DEFAULT_ROUTE_SETTINGS.freeShareCap})`,
  },
  "on-all-down": { type: "string", arg: "MODE", help: "fail-open (default) or fail-closed" },
  cascade: { type: "boolean", help: "also remove the route from its lines and samples" },

  line: { type: "string", arg: "LINE", help: "only events of this line (name or id)" },
  kind: { type: "string", arg: "KIND", help: "state_change, weight_change, table_published or trend_alert" },
  since: { type: "string", arg: "ISO-TIME", help: "only events at or after this time" },
  limit: { type: "string", arg: "N", help: "how many (default 50, at most 500)" },

  role: { type: "string", arg: "ROLE", help: "admin, viewer or router" },

  endpoint: { type: "string", arg: "URL", help: "webhook: where events are POSTed" },
  event: {
    type: "string",
    multiple: true,
    arg: "KIND",
    help: "webhook: an event kind to send (state_change, fail_safe, trend_alert, live_evidence, table_mode); repeatable; default all",
  },
  format: { type: "string", arg: "FORMAT", help: "webhook: json (default) or slack" },
  "secret-env": { type: "string", arg: "VAR", help: "webhook: read the signing secret from this environment variable" },

  from: { type: "string", arg: "ISO-TIME", help: "replay: start of the range" },
  to: { type: "string", arg: "ISO-TIME", help: "replay: end of the range (default now)" },
  policy: { type: "string", arg: "FILE", help: "replay: proposed policy, YAML or JSON (a route's policy fields, weights, passScore)" },
  timeline: { type: "string", arg: "LINE", help: "replay: list every state and weight change of this line, actual and proposed" },

  demo: { type: "boolean", help: "also start four simulated lines on route chat-default" },
  port: { type: "string", arg: "PORT", help: "listen port (env PORT; default 8787)" },
  host: { type: "string", arg: "HOST", help: "listen address (env HOST; default 127.0.0.1)" },
  "data-dir": { type: "string", arg: "DIR", help: "embedded database directory (env LINEWATCH_DATA_DIR)" },

  prune: { type: "boolean", help: "delete lines, routes, samples and webhooks the file does not list (shipped samples are kept)" },
  "dry-run": { type: "boolean", help: "print the plan, change nothing" },
  "update-keys": {
    type: "boolean",
    help: "send every apiKeyEnv key and webhook secretEnv secret, also where one is set already (rotation)",
  },
  output: { type: "string", short: "o", arg: "FILE", help: "write to FILE instead of standard output" },
} as const satisfies Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean; arg?: string; help: string }>;

export type OptionName = keyof typeof OPTIONS;
export const GLOBAL_OPTIONS: OptionName[] = ["url", "token", "json", "help"];

type OptionValue<O> = O extends { type: "boolean" } ? boolean : O extends { multiple: true } ? string[] : string;
export type Values = { [K in OptionName]?: OptionValue<(typeof OPTIONS)[K]> };

export interface Parsed {
  positionals: string[];
  values: Values;
  /** Options as written, for "does not apply" messages. */
  given: OptionName[];
}

export function parseCommandLine(argv: string[]): Parsed {
  const options = Object.fromEntries(
    Object.entries(OPTIONS).map(([name, o]) => [
      name,
      { type: o.type, ...("short" in o ? { short: o.short } : {}), ...("multiple" in o ? { multiple: o.multiple } : {}) },
    ]),
  );
  try {
    const { values, positionals, tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: true, tokens: true });
    const given = [...new Set(tokens.flatMap((t) => (t.kind === "option" ? [t.name as OptionName] : [])))];
    return { positionals, values: values as Values, given };
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ""));
  }
}

/** A number-valued option: absent → undefined; not a number → usage error naming the option. */
export function numberOption(values: Values, name: OptionName, opts: { integer?: boolean } = {}): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== "string" || raw.trim() === "" || !Number.isFinite(n) || (opts.integer && !Number.isInteger(n))) {
    throw new UsageError(`--${name}: expected ${opts.integer ? "an integer" : "a number"}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** Help text for a list of options. */
export function describeOptions(names: OptionName[]): string {
  const rows = names.map((name) => {
    const o = OPTIONS[name];
    const flag = `${"short" in o ? `-${o.short}, ` : "    "}--${name}${"arg" in o ? ` ${o.arg}` : ""}`;
    return [flag, o.help] as const;
  });
  const width = Math.max(...rows.map(([f]) => f.length));
  return rows.map(([f, h]) => `  ${f.padEnd(width)}  ${h}`).join("\n");
}
