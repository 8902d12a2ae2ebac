import { numberOption, type Values } from "../args";
import { type Command, requireArg, withFlagHints } from "../command";
import type { Context } from "../context";
import { InvalidInput, UsageError } from "../errors";
import { fields, table } from "../format";
import { findLine } from "../resolve";
import type { Line, LineCreate, LineList } from "../types";

const LINE_FLAGS: Record<string, string> = {
  name: "NAME",
  tier: "--tier",
  protocol: "--protocol",
  baseUrl: "--base-url",
  model: "--model",
  apiKey: "--api-key-env",
  routes: "--route",
  headers: "--header",
  probeIntervalSec: "--probe-interval-sec",
  timeoutMs: "--timeout-ms",
  dailyQuota: "--daily-quota",
  probeBudgetPct: "--probe-budget-pct",
  maxShare: "--max-share",
  adminState: "--admin-state",
};

const memberships = (l: Pick<Line, "routes">) => l.routes.map((r) => `${r.route}:${r.weight}`).join(",");

/** `--route chat=60` → {route: "chat", weight: 60}; the weight defaults to 100. */
export function parseRouteOption(spec: string): { route: string; weight: number } {
  const m = /^([^=:]+)(?:[=:](.*))?$/.exec(spec);
  const route = m?.[1];
  const weight = m?.[2] === undefined ? 100 : Number(m[2]);
  if (route === undefined || !Number.isInteger(weight))
    throw new UsageError(`--route: expected ROUTE or ROUTE=WEIGHT (an integer), got ${JSON.stringify(spec)}`);
  return { route: route.trim(), weight };
}

/** `--header "X-Org=acme"` or `--header "X-Org: acme"`. */
export function parseHeaderOption(spec: string): [string, string] {
  const [, name, value] = /^([^=:]+)\s*[=:]\s*(.*)$/.exec(spec) ?? [];
  if (name === undefined || value === undefined) throw new UsageError(`--header: expected NAME=VALUE, got ${JSON.stringify(spec)}`);
  return [name.trim(), value];
}

function readKey(ctx: Context, variable: string | undefined): string | undefined {
  if (variable === undefined) return undefined;
  const key = ctx.io.env[variable];
  if (!key)
    throw new InvalidInput(`--api-key-env: the environment variable ${variable} is not set`, [
      { field: "apiKey", message: `environment variable ${variable} is not set` },
    ]);
  return key;
}

function lineBody(ctx: Context, name: string, v: Values): LineCreate {
  for (const flag of ["tier", "base-url", "model"] as const)
    if (v[flag] === undefined) throw new UsageError(`lines add: --${flag} is required`);
  const body: Record<string, unknown> = {
    name,
    tier: v.tier,
    protocol: v.protocol ?? "openai-chat",
    baseUrl: v["base-url"],
    model: v.model,
    routes: (v.route ?? []).map(parseRouteOption),
  };
  const apiKey = readKey(ctx, v["api-key-env"]);
  if (apiKey !== undefined) body.apiKey = apiKey;
  if (v.header) body.headers = Object.fromEntries(v.header.map(parseHeaderOption));
  const numbers: [keyof typeof LINE_FLAGS, Parameters<typeof numberOption>[1], boolean][] = [
    ["probeIntervalSec", "probe-interval-sec", true],
    ["timeoutMs", "timeout-ms", true],
    ["dailyQuota", "daily-quota", true],
    ["probeBudgetPct", "probe-budget-pct", false],
    ["maxShare", "max-share", false],
  ];
  for (const [field, option, integer] of numbers) {
    const n = numberOption(v, option, { integer });
    if (n !== undefined) body[field] = n;
  }
  if (v["admin-state"] !== undefined) body.adminState = v["admin-state"];
  return body as LineCreate;
}

export function showLine(l: Line): string {
  return fields([
    ["name", l.name],
    ["id", l.id],
    ["tier", l.tier],
    ["protocol", l.protocol],
    ["baseUrl", l.baseUrl],
    ["model", l.model],
    ["apiKey", l.hasApiKey ? "set (never shown)" : "none"],
    ["headers", Object.keys(l.headers).join(", ")],
    ["routes", l.routes.map((r) => `${r.route} (weight ${r.weight})`).join(", ")],
    ["probeIntervalSec", l.probeIntervalSec],
    ["timeoutMs", l.timeoutMs],
    ["dailyQuota", l.dailyQuota],
    ["probeBudgetPct", l.probeBudgetPct],
    ["maxShare", l.maxShare],
    ["adminState", l.adminState],
    ["createdAt", l.createdAt],
    ["updatedAt", l.updatedAt],
  ]);
}

const setAdminState = (verb: string, adminState: "active" | "drained" | "disabled", summary: string): Command => ({
  name: `lines ${verb}`,
  args: "LINE",
  min: 1,
  max: 1,
  summary,
  async run(ctx, [ref]) {
    const line = await findLine(ctx.api, requireArg(ref));
    const changed = await ctx.api.patch<Line>(`/v1/lines/${line.id}`, { adminState });
    ctx.output(changed, () => `line ${changed.name}: ${line.adminState} → ${changed.adminState}`);
  },
});

export const lineCommands: Command[] = [
  {
    name: "lines add",
    args: "NAME",
    min: 1,
    max: 1,
    summary: "register a line",
    details:
      "Example: linewatch lines add paid-a --tier paid --base-url https://api.openai.com/v1 --model gpt-4o-mini --api-key-env OPENAI_API_KEY --route chat-default=60",
    options: [
      "tier",
      "protocol",
      "base-url",
      "model",
      "api-key-env",
      "route",
      "header",
      "probe-interval-sec",
      "timeout-ms",
      "daily-quota",
      "probe-budget-pct",
      "max-share",
      "admin-state",
    ],
    async run(ctx, [name]) {
      const line = await withFlagHints(ctx.api.post<Line>("/v1/lines", lineBody(ctx, requireArg(name), ctx.values)), LINE_FLAGS);
      ctx.output(line, () => `created line ${line.name} (${line.id})`);
    },
  },
  {
    name: "lines list",
    max: 0,
    summary: "list lines",
    async run(ctx) {
      const list = await ctx.api.get<LineList>("/v1/lines");
      ctx.output(list, () =>
        list.lines.length === 0
          ? "no lines yet: add one with `linewatch lines add`"
          : table(
              ["NAME", "TIER", "PROTOCOL", "MODEL", "ROUTES", "ADMIN", "KEY", "ID"],
              list.lines.map((l) => [l.name, l.tier, l.protocol, l.model, memberships(l), l.adminState, l.hasApiKey ? "yes" : "no", l.id]),
            ),
      );
    },
  },
  {
    name: "lines show",
    args: "LINE",
    min: 1,
    max: 1,
    summary: "show a line (by name or id)",
    async run(ctx, [ref]) {
      const line = await findLine(ctx.api, requireArg(ref));
      ctx.output(line, () => showLine(line));
    },
  },
  setAdminState("drain", "drained", "drain a line: weight 0 in every table, still probed"),
  setAdminState("enable", "active", "re-enable a drained or disabled line"),
  setAdminState("disable", "disabled", "disable a line: weight 0 and no probes"),
  {
    name: "lines rm",
    args: "LINE",
    min: 1,
    max: 1,
    summary: "delete a line (its health and probe results go with it)",
    async run(ctx, [ref]) {
      const line = await findLine(ctx.api, requireArg(ref));
      await ctx.api.delete(`/v1/lines/${line.id}`);
      ctx.output({ deleted: { kind: "line", name: line.name, id: line.id } }, () => `deleted line ${line.name}`);
    },
  },
];
