// What `apply` would change: the registry file against the registry as the API returns it.
// Pure: no I/O; environment lookups come in as a function.
import { type FieldProblem, InvalidInput } from "./errors";
import type { DesiredLine, DesiredWebhook, RegistryFile, RouteSpec, SampleSpec } from "./registry-file";
import type { Line, Route, Sample, Webhook } from "./types";

export type Kind = "route" | "line" | "sample" | "webhook";

export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

export type Change =
  | { action: "create"; kind: Kind; name: string; body: Record<string, unknown>; keyFrom?: string }
  | { action: "update"; kind: Kind; name: string; target: string; patch: Record<string, unknown>; changes: FieldChange[] }
  | { action: "delete"; kind: Kind; name: string; target: string };

export interface Current {
  routes: Route[];
  lines: Line[];
  samples: Sample[];
  /** Read only when the file has a webhooks: section (they are admin's to read). */
  webhooks?: Webhook[];
}

export interface PlanOptions {
  prune: boolean;
  /** Send apiKeyEnv keys also to lines that have a key already, and secretEnv secrets to sinks that exist (rotation). */
  updateKeys: boolean;
  env: (name: string) => string | undefined;
}

/** JSON with sorted keys: equal values, equal text, whatever order the keys came in. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}
const headerNames = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([name, v]) => [name, { hasValue: v !== "" }]));
const same = (a: unknown, b: unknown) => canonical(a) === canonical(b);
const byRoute = (m: { route: string; weight: number }[]) => [...m].sort((a, b) => a.route.localeCompare(b.route));

/** Compare field by field; the patch holds the desired values of the fields that differ. */
function diff(pairs: [string, unknown, unknown][]): { patch: Record<string, unknown>; changes: FieldChange[] } {
  const patch: Record<string, unknown> = {};
  const changes: FieldChange[] = [];
  for (const [field, from, to] of pairs) {
    if (same(from, to)) continue;
    patch[field] = to;
    changes.push({ field, from, to });
  }
  return { patch, changes };
}

function routeChange(want: RouteSpec, have: Route | undefined): Change | null {
  if (!have) {
    const { policy, ...rest } = want;
    return { action: "create", kind: "route", name: want.name, body: policy ? { ...rest, policy } : rest };
  }
  const { patch, changes } = diff([
    ["freeShareCap", have.freeShareCap, want.freeShareCap],
    ["onAllDown", have.onAllDown, want.onAllDown],
    ["policy", have.policy && Object.keys(have.policy).length > 0 ? have.policy : null, want.policy],
  ]);
  return changes.length ? { action: "update", kind: "route", name: want.name, target: have.name, patch, changes } : null;
}

function sampleChange(want: SampleSpec, have: Sample | undefined): Change | null {
  if (!have) return { action: "create", kind: "sample", name: want.name, body: { ...want } };
  const { patch, changes } = diff([
    ["protocol", have.protocol, want.protocol],
    ["routes", [...have.routes].sort(), [...want.routes].sort()],
    ["request", have.request, want.request],
    ["expect", have.expect, want.expect],
    ["variants", have.variants, want.variants],
    ["timeoutMs", have.timeoutMs, want.timeoutMs ?? null],
    ["weight", have.weight, want.weight],
  ]);
  if (patch.routes) patch.routes = want.routes;
  return changes.length ? { action: "update", kind: "sample", name: want.name, target: have.id, patch, changes } : null;
}

function lineChange(want: DesiredLine, have: Line | undefined, key: { value: string; from: string } | null): Change | null {
  const s = want.spec;
  if (!have) {
    const body: Record<string, unknown> = { ...s, ...(want.adminState ? { adminState: want.adminState } : {}) };
    if (key) body.apiKey = key.value;
    return { action: "create", kind: "line", name: s.name, body, ...(key ? { keyFrom: key.from } : {}) };
  }
  const { patch, changes } = diff([
    ["tier", have.tier, s.tier],
    ["protocol", have.protocol, s.protocol],
    ["baseUrl", have.baseUrl, s.baseUrl],
    ["model", have.model, s.model],
    // Header values are secrets the API never returns (nor export writes): a file that lists headers
    // is compared by names and whether each has a value; one that does not leaves them as they are.
    ["headers", have.headers, s.headers === undefined ? have.headers : headerNames(s.headers)],
    ["routes", byRoute(have.routes), byRoute(s.routes)],
    ["probeIntervalSec", have.probeIntervalSec, s.probeIntervalSec],
    ["timeoutMs", have.timeoutMs, s.timeoutMs ?? null],
    ["dailyQuota", have.dailyQuota, s.dailyQuota ?? null],
    ["probeBudgetPct", have.probeBudgetPct, s.probeBudgetPct],
    ["maxShare", have.maxShare, s.maxShare ?? null],
    ...(want.adminState ? [["adminState", have.adminState, want.adminState] as [string, unknown, unknown]] : []),
  ]);
  if (patch.routes) patch.routes = s.routes;
  if (patch.headers) patch.headers = s.headers ?? {};
  if (key) {
    patch.apiKey = key.value;
    // The value is never shown: only where it comes from.
    changes.push({ field: "apiKey", from: have.hasApiKey ? "(set)" : "(none)", to: `$${key.from}` });
  }
  return changes.length ? { action: "update", kind: "line", name: s.name, target: have.id, patch, changes } : null;
}

const sorted = (xs: readonly string[]) => [...xs].sort();

function webhookChange(want: DesiredWebhook, have: Webhook | undefined, secret: { value: string; from: string } | null): Change | null {
  const s = want.spec;
  if (!have) {
    const body: Record<string, unknown> = { ...s };
    if (secret) body.secret = secret.value;
    return { action: "create", kind: "webhook", name: s.name, body, ...(secret ? { keyFrom: secret.from } : {}) };
  }
  const { patch, changes } = diff([
    ["url", have.url, s.url],
    ["events", sorted(have.events), sorted(s.events)],
    ["routes", sorted(have.routes), sorted(s.routes)],
    ["format", have.format, s.format],
  ]);
  if (patch.events) patch.events = s.events;
  if (patch.routes) patch.routes = s.routes;
  if (secret) {
    patch.secret = secret.value;
    changes.push({ field: "secret", from: "(set)", to: `$${secret.from}` });
  }
  return changes.length ? { action: "update", kind: "webhook", name: s.name, target: have.id, patch, changes } : null;
}

/**
 * The changes, in an order the API accepts: routes before what joins them, lines and samples
 * before the routes they leave. Problems the API would refuse mid-way are reported first.
 */
export function planChanges(file: RegistryFile, current: Current, opts: PlanOptions): Change[] {
  const problems: FieldProblem[] = [];
  const haveRoutes = new Map(current.routes.map((r) => [r.name, r]));
  const haveLines = new Map(current.lines.map((l) => [l.name, l]));
  const haveSamples = new Map(current.samples.map((s) => [s.name, s]));
  const pruneRoutes = opts.prune && file.sections.routes;

  // Every route a line or sample joins must exist once the file is applied.
  const fileRoutes = new Set(file.routes.map((r) => r.name));
  const routeAfter = (name: string) => fileRoutes.has(name) || (!pruneRoutes && haveRoutes.has(name));
  for (const l of file.lines) {
    l.spec.routes.forEach((m, j) => {
      if (!routeAfter(m.route))
        problems.push({
          field: `lines[${l.index}].routes[${j}].route`,
          message: `no route ${JSON.stringify(m.route)}: add it under routes:`,
        });
    });
  }
  for (const [i, s] of file.samples.entries()) {
    s.routes.forEach((r, j) => {
      if (!routeAfter(r))
        problems.push({ field: `samples[${i}].routes[${j}]`, message: `no route ${JSON.stringify(r)}: add it under routes:` });
    });
  }
  for (const w of file.webhooks) {
    w.spec.routes.forEach((r, j) => {
      if (!routeAfter(r))
        problems.push({ field: `webhooks[${w.index}].routes[${j}]`, message: `no route ${JSON.stringify(r)}: add it under routes:` });
    });
  }

  // Keys: sent to a line that has none (or to every line with --update-keys); never compared, never shown.
  const keys = new Map<string, { value: string; from: string } | null>();
  for (const l of file.lines) {
    const have = haveLines.get(l.spec.name);
    const env = l.apiKeyEnv;
    const wanted = env !== null && (!have?.hasApiKey || opts.updateKeys);
    if (!wanted) continue;
    const value = opts.env(env);
    if (!value) problems.push({ field: `lines[${l.index}].apiKeyEnv`, message: `the environment variable ${env} is not set` });
    else keys.set(l.spec.name, { value, from: env });
  }
  // Webhook secrets: like keys, sent to a sink being created (which needs one), or to every sink with --update-keys.
  const haveWebhooks = new Map((current.webhooks ?? []).map((w) => [w.name, w]));
  const secrets = new Map<string, { value: string; from: string } | null>();
  for (const w of file.webhooks) {
    const have = haveWebhooks.get(w.spec.name);
    if (w.secretEnv === null) {
      if (!have)
        problems.push({ field: `webhooks[${w.index}].secretEnv`, message: "a new webhook needs its signing secret: name its variable" });
      continue;
    }
    if (have && !opts.updateKeys) continue;
    const value = opts.env(w.secretEnv);
    if (!value) problems.push({ field: `webhooks[${w.index}].secretEnv`, message: `the environment variable ${w.secretEnv} is not set` });
    else secrets.set(w.spec.name, { value, from: w.secretEnv });
  }
  const [first] = problems;
  if (first) {
    throw new InvalidInput(`${first.field}: ${first.message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""}`, problems);
  }

  const changes: Change[] = [];
  const push = (c: Change | null) => c && changes.push(c);
  for (const r of file.routes) push(routeChange(r, haveRoutes.get(r.name)));
  for (const s of file.samples) push(sampleChange(s, haveSamples.get(s.name)));
  for (const l of file.lines) push(lineChange(l, haveLines.get(l.spec.name), keys.get(l.spec.name) ?? null));
  for (const w of file.webhooks) push(webhookChange(w, haveWebhooks.get(w.spec.name), secrets.get(w.spec.name) ?? null));
  if (opts.prune) {
    if (file.sections.webhooks) {
      const keep = new Set(file.webhooks.map((w) => w.spec.name));
      for (const w of current.webhooks ?? [])
        if (!keep.has(w.name)) changes.push({ action: "delete", kind: "webhook", name: w.name, target: w.id });
    }
    if (file.sections.lines) {
      const keep = new Set(file.lines.map((l) => l.spec.name));
      for (const l of current.lines) if (!keep.has(l.name)) changes.push({ action: "delete", kind: "line", name: l.name, target: l.id });
    }
    if (file.sections.samples) {
      const keep = new Set(file.samples.map((s) => s.name));
      // Shipped samples come with the control plane (and come back at its next start): never pruned.
      for (const s of current.samples)
        if (!keep.has(s.name) && s.source !== "shipped") changes.push({ action: "delete", kind: "sample", name: s.name, target: s.id });
    }
    if (pruneRoutes) {
      for (const r of current.routes)
        if (!fileRoutes.has(r.name)) changes.push({ action: "delete", kind: "route", name: r.name, target: r.name });
    }
  }
  return changes;
}

/** A value as the plan shows it: short JSON, routes as name:weight. */
function show(field: string, v: unknown): string {
  if (v === null || v === undefined) return "(none)";
  if (field === "routes" && Array.isArray(v) && v.every((m) => m && typeof m === "object" && "route" in m)) {
    return v.length ? v.map((m: { route: string; weight: number }) => `${m.route}:${m.weight}`).join(",") : "(none)";
  }
  if (field === "apiKey" || field === "secret") return String(v);
  const text = JSON.stringify(v);
  return text.length > 100 ? `${text.slice(0, 99)}…` : text;
}

export function describeChange(c: Change): string {
  switch (c.action) {
    case "create": {
      const b = c.body;
      const detail =
        c.kind === "line"
          ? ` (${String(b.tier)}, ${String(b.baseUrl)}, ${String(b.model)}${Array.isArray(b.routes) && b.routes.length ? `, ${show("routes", b.routes)}` : ""}${c.keyFrom ? `, key from $${c.keyFrom}` : ""})`
          : c.kind === "sample"
            ? ` (${String(b.protocol)})`
            : c.kind === "webhook"
              ? ` (${String(b.format)}, ${String(b.url)}${c.keyFrom ? `, secret from $${c.keyFrom}` : ""})`
              : "";
      return `+ ${c.kind} ${c.name}${detail}`;
    }
    case "update":
      return [`~ ${c.kind} ${c.name}`, ...c.changes.map((f) => `    ${f.field}: ${show(f.field, f.from)} → ${show(f.field, f.to)}`)].join(
        "\n",
      );
    case "delete":
      return `- ${c.kind} ${c.name}`;
  }
}

export function summarize(changes: Change[]): string {
  const n = (a: Change["action"]) => changes.filter((c) => c.action === a).length;
  return `${changes.length} change${changes.length === 1 ? "" : "s"}: ${n("create")} to create, ${n("update")} to change, ${n("delete")} to delete`;
}

/** The plan as --json prints it: no bodies (they may hold keys and secrets), just what changes. */
export const changeView = (c: Change) =>
  c.action === "update"
    ? { action: c.action, kind: c.kind, name: c.name, changes: c.changes }
    : { action: c.action, kind: c.kind, name: c.name };
