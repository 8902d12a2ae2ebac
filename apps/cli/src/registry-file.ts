// The declarative registry file of `linewatch apply` and `linewatch export`:
//
//   routes:  [{name, freeShareCap?, onAllDown?, policy?}]
//   lines:   [{name, tier, protocol, baseUrl, model, apiKeyEnv?, headers?, routes?, probeIntervalSec?, ...}]
//   samples: [{name, protocol, routes?, request, expect, timeoutMs?, weight?}]
//   webhooks: [{name, url, events?, routes?, format?, secretEnv?}]
//
// Entries are validated with the same zod schemas the API validates its requests with, so a file
// that passes here is one the API accepts, and a bad one is refused before anything changes.

import type { z } from "@hono/zod-openapi";
import {
  type LineCreate,
  LineCreateSchema,
  RouteCreateSchema,
  type SampleCreate,
  SampleCreateSchema,
  type WebhookCreate,
  WebhookCreateSchema,
} from "@linewatch/contract";
import { checkRouteOverrides, type OnAllDown, OVERRIDE_FIELDS } from "@linewatch/core";
import { Document } from "yaml";
import { type FieldProblem, InvalidInput } from "./errors";
import type { Line, Route, Sample, Webhook } from "./types";

export type LineSpec = Omit<LineCreate, "apiKey" | "adminState">;
export type SampleSpec = SampleCreate;
export type RouteSpec = {
  name: string;
  freeShareCap: number;
  onAllDown: OnAllDown;
  policy: Record<string, number> | null;
};

export interface DesiredLine {
  spec: LineSpec;
  /** Only when the file says so: a drain done by hand is not undone by a file that does not mention it. */
  adminState: "active" | "drained" | "disabled" | null;
  /** The environment variable holding the upstream key; null: the file leaves the key alone. */
  apiKeyEnv: string | null;
  index: number;
}

export type WebhookSpec = Omit<WebhookCreate, "secret">;

export interface DesiredWebhook {
  spec: WebhookSpec;
  /** The environment variable holding the signing secret; null: the file leaves the secret alone. */
  secretEnv: string | null;
  index: number;
}

export interface RegistryFile {
  routes: RouteSpec[];
  lines: DesiredLine[];
  samples: SampleSpec[];
  webhooks: DesiredWebhook[];
  /** Which sections the file has: --prune only prunes those. */
  sections: { routes: boolean; lines: boolean; samples: boolean; webhooks: boolean };
}

const SECTIONS = ["routes", "lines", "samples", "webhooks"] as const;
const WebhookSpecSchema = WebhookCreateSchema.omit({ secret: true });
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const fieldPath = (prefix: string, path: PropertyKey[]) =>
  path.reduce<string>((acc, key) => (typeof key === "number" ? `${acc}[${key}]` : `${acc}.${String(key)}`), prefix);

function zodProblems(prefix: string, error: z.ZodError): FieldProblem[] {
  return error.issues.flatMap((issue): FieldProblem[] => {
    const base = fieldPath(prefix, issue.path);
    if (issue.code === "unrecognized_keys") return issue.keys.map((key) => ({ field: `${base}.${key}`, message: "unknown field" }));
    return [{ field: base, message: issue.message }];
  });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The same policy checks as POST /v1/routes (core checkRouteOverrides): known thresholds, usable values. */
function policyProblems(prefix: string, policy: Record<string, number> | undefined): FieldProblem[] {
  if (!policy) return [];
  const checked = checkRouteOverrides(policy);
  if (checked.ok) return [];
  if (checked.error.kind === "invalid") return checked.error.problems.map((p) => ({ field: `${prefix}.${p.field}`, message: p.message }));
  const known = OVERRIDE_FIELDS.join(", ");
  return checked.error.fields.map((k) => ({ field: `${prefix}.policy.${k}`, message: `unknown threshold (known: ${known})` }));
}

/** Validate a parsed file. Every problem is collected, each naming its field (`lines[2].baseUrl`). */
export function parseRegistryFile(raw: unknown, source: string): RegistryFile {
  const problems: FieldProblem[] = [];
  const doc = raw === null || raw === undefined ? {} : raw;
  if (!isRecord(doc)) throw new InvalidInput(`${source}: expected a mapping with routes:, lines:, samples: and webhooks:`);
  for (const key of Object.keys(doc)) {
    if (!(SECTIONS as readonly string[]).includes(key))
      problems.push({ field: key, message: "unknown section (routes, lines, samples, webhooks)" });
  }
  const list = (key: (typeof SECTIONS)[number]): unknown[] => {
    const v = doc[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      problems.push({ field: key, message: "must be a list" });
      return [];
    }
    return v;
  };

  const routes: RouteSpec[] = [];
  for (const [i, entry] of list("routes").entries()) {
    const r = RouteCreateSchema.safeParse(entry);
    if (!r.success) {
      problems.push(...zodProblems(`routes[${i}]`, r.error));
      continue;
    }
    problems.push(...policyProblems(`routes[${i}]`, r.data.policy));
    routes.push({ name: r.data.name, freeShareCap: r.data.freeShareCap, onAllDown: r.data.onAllDown, policy: r.data.policy ?? null });
  }

  const lines: DesiredLine[] = [];
  for (const [i, entry] of list("lines").entries()) {
    if (!isRecord(entry)) {
      problems.push({ field: `lines[${i}]`, message: "must be a mapping" });
      continue;
    }
    const { apiKeyEnv, apiKey, ...rest } = entry;
    if (apiKey !== undefined)
      problems.push({
        field: `lines[${i}].apiKey`,
        message: "keys are not kept in files: put the key in an environment variable and name it with apiKeyEnv",
      });
    if (apiKeyEnv !== undefined && (typeof apiKeyEnv !== "string" || !ENV_NAME.test(apiKeyEnv))) {
      problems.push({ field: `lines[${i}].apiKeyEnv`, message: "must be the name of an environment variable" });
    }
    const r = LineCreateSchema.safeParse(rest);
    if (!r.success) {
      problems.push(...zodProblems(`lines[${i}]`, r.error));
      continue;
    }
    const { adminState, apiKey: _none, ...spec } = r.data;
    lines.push({
      spec,
      adminState: "adminState" in rest ? adminState : null,
      apiKeyEnv: typeof apiKeyEnv === "string" ? apiKeyEnv : null,
      index: i,
    });
  }

  const samples: SampleSpec[] = [];
  for (const [i, entry] of list("samples").entries()) {
    const r = SampleCreateSchema.safeParse(entry);
    if (!r.success) {
      problems.push(...zodProblems(`samples[${i}]`, r.error));
      continue;
    }
    samples.push(r.data);
  }

  const webhooks: DesiredWebhook[] = [];
  for (const [i, entry] of list("webhooks").entries()) {
    if (!isRecord(entry)) {
      problems.push({ field: `webhooks[${i}]`, message: "must be a mapping" });
      continue;
    }
    const { secretEnv, secret, ...rest } = entry;
    if (secret !== undefined)
      problems.push({
        field: `webhooks[${i}].secret`,
        message: "secrets are not kept in files: put it in an environment variable and name it with secretEnv",
      });
    if (secretEnv !== undefined && (typeof secretEnv !== "string" || !ENV_NAME.test(secretEnv))) {
      problems.push({ field: `webhooks[${i}].secretEnv`, message: "must be the name of an environment variable" });
    }
    const r = WebhookSpecSchema.safeParse(rest);
    if (!r.success) {
      problems.push(...zodProblems(`webhooks[${i}]`, r.error));
      continue;
    }
    webhooks.push({ spec: r.data, secretEnv: typeof secretEnv === "string" ? secretEnv : null, index: i });
  }

  for (const [key, names] of [
    ["routes", routes.map((r) => r.name)],
    ["lines", lines.map((l) => l.spec.name)],
    ["samples", samples.map((s) => s.name)],
    ["webhooks", webhooks.map((w) => w.spec.name)],
  ] as const) {
    const seen = new Map<string, number>();
    names.forEach((name, i) => {
      if (seen.has(name))
        problems.push({ field: `${key}[${i}].name`, message: `${JSON.stringify(name)} is already used by ${key}[${seen.get(name)}]` });
      else seen.set(name, i);
    });
  }

  const [first] = problems;
  if (first) {
    throw new InvalidInput(
      `${source}: ${first.field}: ${first.message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""}`,
      problems,
    );
  }
  return {
    routes,
    lines,
    samples,
    webhooks,
    sections: {
      routes: doc.routes !== undefined,
      lines: doc.lines !== undefined,
      samples: doc.samples !== undefined,
      webhooks: doc.webhooks !== undefined,
    },
  };
}

/** The environment variable export suggests for a line's key: LINEWATCH_KEY_PAID_A for paid-a. */
export const keyEnvName = (lineName: string) => `LINEWATCH_KEY_${lineName.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}`;

/** The environment variable export suggests for a webhook's signing secret: LINEWATCH_WEBHOOK_SECRET_ONCALL for oncall. */
export const secretEnvName = (webhookName: string) => `LINEWATCH_WEBHOOK_SECRET_${webhookName.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}`;

/** The registry as a file: what `export` writes and `apply` reads. Keys never leave the server; shipped samples stay out. */
export function registryToFile(current: { routes: Route[]; lines: Line[]; samples: Sample[]; webhooks?: Webhook[] | undefined }) {
  const routes = current.routes.map((r) => ({
    name: r.name,
    freeShareCap: r.freeShareCap,
    onAllDown: r.onAllDown,
    ...(r.policy && Object.keys(r.policy).length > 0 ? { policy: r.policy } : {}),
  }));
  const lines = current.lines.map((l) => ({
    name: l.name,
    tier: l.tier,
    protocol: l.protocol,
    baseUrl: l.baseUrl,
    model: l.model,
    ...(l.hasApiKey ? { apiKeyEnv: keyEnvName(l.name) } : {}),
    // Header values are never returned (secrets, like the key): an export lists the lines without them.
    routes: l.routes.map((m) => ({ route: m.route, weight: m.weight })),
    probeIntervalSec: l.probeIntervalSec,
    ...(l.timeoutMs !== null ? { timeoutMs: l.timeoutMs } : {}),
    ...(l.dailyQuota !== null ? { dailyQuota: l.dailyQuota } : {}),
    probeBudgetPct: l.probeBudgetPct,
    ...(l.maxShare !== null ? { maxShare: l.maxShare } : {}),
    ...(l.adminState !== "active" ? { adminState: l.adminState } : {}),
  }));
  const samples = current.samples
    .filter((s) => s.source !== "shipped")
    .map((s) => ({
      name: s.name,
      protocol: s.protocol,
      ...(s.routes.length > 0 ? { routes: s.routes } : {}),
      request: s.request,
      expect: s.expect,
      ...(s.variants.length > 0 ? { variants: s.variants } : {}),
      ...(s.timeoutMs !== null ? { timeoutMs: s.timeoutMs } : {}),
      weight: s.weight,
    }));
  // Signing secrets are never returned either: each sink names the variable apply reads its secret from.
  const webhooks = (current.webhooks ?? []).map((w) => ({
    name: w.name,
    url: w.url,
    events: w.events,
    ...(w.routes.length > 0 ? { routes: w.routes } : {}),
    format: w.format,
    secretEnv: secretEnvName(w.name),
  }));
  return { routes, lines, samples, ...(webhooks.length > 0 ? { webhooks } : {}) };
}

export function registryToYaml(
  current: { routes: Route[]; lines: Line[]; samples: Sample[]; webhooks?: Webhook[] | undefined },
  header: string,
): string {
  const doc = new Document(registryToFile(current));
  doc.commentBefore = header;
  return doc.toString({ lineWidth: 0 });
}
