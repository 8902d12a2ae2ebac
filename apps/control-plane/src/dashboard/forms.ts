// HTML forms → the API's request bodies, checked by the API's own zod schemas (and what the API
// refuses to store); errors come back keyed by form field so the page can show each one next to its input.
import type { z } from "@hono/zod-openapi";
import { type LineCreate, LineCreateSchema, type SampleCreate, SampleCreateSchema } from "@linewatch/contract";
import type { ApiError } from "../errors";
import { unstorable } from "../validation";

export type FormValues = Record<string, string>;
/** Form field name → message; "" is the form as a whole. */
export type FormErrors = Record<string, string>;

/** Route rows the line form offers (a line joins more routes through the API or the CLI). */
export const ROUTE_ROWS = 3;

/** A form read into what the service takes (`value`), and how to put the service's errors back onto its fields. */
export type Parsed<T> = { ok: true; value: T; toField: (path: readonly PropertyKey[]) => string } | { ok: false; errors: FormErrors };

/** Form data as plain strings; repeated names keep their last value, checkboxes are "on". */
export function formValues(body: Record<string, string | File | (string | File)[]>): FormValues {
  const values: FormValues = {};
  for (const [k, v] of Object.entries(body)) {
    const last = Array.isArray(v) ? v.at(-1) : v;
    if (typeof last === "string") values[k] = last;
  }
  return values;
}

const text = (v: string | undefined) => (v ?? "").trim();

/** "" → absent; a number → number; anything else → an error for that field. */
function numberField(values: FormValues, name: string, errors: FormErrors): number | undefined {
  const raw = text(values[name]);
  if (raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) {
    errors[name] = "must be a number";
    return undefined;
  }
  return n;
}

const list = (raw: string | undefined) =>
  text(raw)
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

const setIf = (o: Record<string, unknown>, key: string, value: unknown) => {
  if (value !== undefined && value !== "") o[key] = value;
};

/** Zod's issues (or the API's error details) onto the form's fields. */
export function errorsFrom(
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
  toField: (path: readonly PropertyKey[]) => string,
): FormErrors {
  const errors: FormErrors = {};
  for (const issue of issues) {
    const field = toField(issue.path);
    errors[field] = errors[field] ? `${errors[field]}; ${issue.message}` : issue.message;
  }
  return errors;
}

function check<S extends z.ZodType>(
  schema: S,
  body: Record<string, unknown>,
  toField: (path: readonly PropertyKey[]) => string,
  local: FormErrors,
): Parsed<z.output<S>> {
  const result = schema.safeParse(body);
  if (!result.success || Object.keys(local).length > 0) {
    return { ok: false, errors: { ...(result.success ? {} : errorsFrom(result.error.issues, toField)), ...local } };
  }
  // As the API's validator (routes/common.ts): what validated but cannot be stored is refused, naming its field.
  const problem = unstorable(result.data);
  if (problem) return { ok: false, errors: errorsFrom([{ path: detailPath(problem[0] || "json"), message: problem[1] }], toField) };
  return { ok: true, value: result.data, toField };
}

/** A service's refusal onto the form: details that name a field go next to it. */
export function formErrorsFrom(error: ApiError, toField: (path: readonly PropertyKey[]) => string): FormErrors {
  const errors: FormErrors = {};
  for (const d of error.details) {
    const key = d.field ? toField(detailPath(d.field)) : "";
    errors[key] = errors[key] ? `${errors[key]}; ${d.message}` : d.message;
  }
  if (!errors[""] && Object.keys(errors).length === 0) errors[""] = error.message;
  return errors;
}

/** The line form: what POST /v1/lines takes, validated by LineCreateSchema. */
export function parseLineForm(values: FormValues): Parsed<LineCreate> {
  const local: FormErrors = {};
  const body: Record<string, unknown> = {};
  for (const key of ["name", "tier", "protocol", "baseUrl", "model", "adminState"]) setIf(body, key, text(values[key]));
  // Keys are secrets: kept exactly as typed (no trim), never echoed back into the page.
  setIf(body, "apiKey", values.apiKey ?? "");
  const rows: number[] = [];
  const routes: { route: string; weight: unknown }[] = [];
  for (let i = 0; i < ROUTE_ROWS; i++) {
    const route = text(values[`route.${i}`]);
    if (!route) continue;
    rows.push(i);
    const weight = numberField(values, `weight.${i}`, local);
    if (weight === undefined && !local[`weight.${i}`]) local[`weight.${i}`] = "a base weight is needed with a route";
    routes.push({ route, weight });
  }
  body.routes = routes;
  for (const key of ["probeIntervalSec", "timeoutMs", "dailyQuota", "probeBudgetPct", "maxShare"])
    setIf(body, key, numberField(values, key, local));
  const toField = (path: readonly PropertyKey[]) => {
    const [first, index, leaf] = path.map(String);
    if (first === "routes") {
      const row = rows[Number(index)] ?? 0;
      return leaf === "weight" ? `weight.${row}` : `route.${row}`;
    }
    return first && first in values ? first : first === "apiKey" ? "apiKey" : "";
  };
  return check(LineCreateSchema, body, toField, local);
}

export const DEFAULT_SAMPLE_REQUEST = JSON.stringify(
  { messages: [{ role: "user", content: "Reply with exactly this code and nothing else: {{nonce}}" }], max_tokens: 50 },
  null,
  2,
);

/** The sample form: what POST /v1/samples takes, validated by SampleCreateSchema. */
export function parseSampleForm(values: FormValues): Parsed<SampleCreate> {
  const local: FormErrors = {};
  const body: Record<string, unknown> = {};
  setIf(body, "name", text(values.name));
  setIf(body, "protocol", text(values.protocol));
  body.routes = list(values.routes);
  const rawRequest = text(values.request);
  if (rawRequest === "") local.request = "a request body is needed";
  else {
    try {
      body.request = JSON.parse(rawRequest);
    } catch (error) {
      local.request = `not valid JSON: ${(error as Error).message}`;
    }
  }
  const expect: Record<string, unknown> = {};
  for (const key of ["minLength", "maxLength", "maxLatencyMs"]) setIf(expect, key, numberField(values, `expect.${key}`, local));
  for (const key of ["requiredFields", "contains"]) {
    const items = list(values[`expect.${key}`]);
    if (items.length > 0) expect[key] = items;
  }
  for (const key of ["matches", "answer"]) setIf(expect, key, text(values[`expect.${key}`]));
  for (const key of ["nonce", "varies"]) if (values[`expect.${key}`] === "on") expect[key] = true;
  body.expect = expect;
  setIf(body, "timeoutMs", numberField(values, "timeoutMs", local));
  setIf(body, "weight", numberField(values, "weight", local));
  const toField = (path: readonly PropertyKey[]) => {
    const [first, second] = path.map(String);
    if (first === "expect") return second ? `expect.${second}` : "expect";
    return first && ["name", "protocol", "routes", "request", "timeoutMs", "weight"].includes(first) ? first : "";
  };
  if (body.request === undefined) {
    // Still run the schema for the other fields; request's own message is the one above.
    const rest = check(SampleCreateSchema, { ...body, request: {} }, toField, local);
    if (!rest.ok) delete rest.errors.request;
    return { ok: false, errors: rest.ok ? local : { ...rest.errors, ...local } };
  }
  return check(SampleCreateSchema, body, toField, local);
}

/** A field path as the API's error details name it ("routes.0.weight") → the same path form zod uses. */
export const detailPath = (field: string | undefined): PropertyKey[] =>
  field ? field.split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p)) : [];
