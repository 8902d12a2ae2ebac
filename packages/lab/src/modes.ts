// The behaviours a simulated line can be switched to, and the one parser that turns an
// admin request (function call or HTTP body) into a complete setting with defaults.
import type { Result } from "@linewatch/core";

export const LAB_MODES = [
  "ok",
  "truncate",
  "drop-fields",
  "stale",
  "downgrade",
  "slow",
  "errors",
  "rate-limit",
  "hang",
  "long-prompt",
  "cut",
  "substitute",
  "inflate-usage",
  "shape-change",
  "recognise-probes",
  "flaky",
] as const;
export type LabMode = (typeof LAB_MODES)[number];
/** What `flaky` alternates with: any mode but itself. */
export type FaultMode = Exclude<LabMode, "flaky">;

type NoParams = Record<never, never>;

/** Optional parameters per mode, as callers pass them. */
export interface ModeParamsMap {
  ok: NoParams;
  /** Content cut to `fraction` of its length (default 0.3). */
  truncate: { fraction?: number };
  /** JSON answers lose `fields` (default: half the keys, picked by the seed); `usage` is dropped. */
  "drop-fields": { fields?: string[] };
  /** Replays the earlier answer to the same prompt, whatever the new nonce. */
  stale: NoParams;
  /** A smaller model: wrong answers to correctness questions, shorter plainer text. */
  downgrade: NoParams;
  /** Adds `latencyMs` (default 2000) before answering. */
  slow: { latencyMs?: number };
  /** Answers `status` (default 500) to a `rate` (default 1) of requests. */
  errors: { status?: number; rate?: number };
  /** Answers 429 with `Retry-After: retryAfterSec` (default 20) to a `rate` (default 1) of requests. */
  "rate-limit": { retryAfterSec?: number; rate?: number };
  /** Reads the request and never answers, until the lab closes. */
  hang: NoParams;
  /**
   * Answers well to prompts of at most `minPromptChars` characters (default 400: the golden
   * samples are short) and, to longer ones, a 200 that is `empty` content or a `masked-error`
   * (an error object in a 200, like a free line whose quota ran out): what only live traffic sees.
   */
  "long-prompt": { minPromptChars?: number; answer?: "empty" | "masked-error" };
  /**
   * Answers end early, still 200. A stream stops after `at` (default 0.5) of its events without the
   * protocol's last one (`[DONE]`, `message_stop`, `response.completed`), or with an in-band error
   * event there when `how` is `error` (Anthropic's `overloaded_error`); a non-streamed answer keeps its
   * first few tokens and says it hit the token limit (`length`, `max_tokens`, `incomplete`).
   */
  cut: { at?: number; how?: "end" | "error" };
  /**
   * Another model answers the fingerprint prompts (models.ts) for a `share` of the requests (default
   * 1: all of them): a sibling of the named model whose modal answer differs on `differOn` of the
   * bank's prompts (default 0.3). The golden samples are answered as usual: only fingerprints see it.
   */
  substitute: { share?: number; differOn?: number };
  /** Usage reported `factor` times the true counts (default 1.2), prompt and completion tokens alike. */
  "inflate-usage": { factor?: number };
  /** Answers in another protocol shape: a uuid for an id, and a field the named API never sends (another backend). */
  "shape-change": NoParams;
  /**
   * A relay that answers with the named model only the requests it takes for probes, and with a sibling
   * (differing on `differOn`, default 0.3) the rest: `by` `fixed-prompt` (each bank prompt's first
   * wording; rotating phrasings defeat it) or `header` (requests that carry `header`, default
   * `x-probe`; probes that look like SDK traffic carry none).
   */
  "recognise-probes": { by?: "fixed-prompt" | "header"; header?: string; differOn?: number };
  /** Alternates ok and `fault` (default `errors`); the fault's own parameters sit alongside. */
  flaky: { fault?: FaultMode } & ModeParamsMap["truncate"] &
    ModeParamsMap["drop-fields"] &
    ModeParamsMap["slow"] &
    ModeParamsMap["errors"] &
    ModeParamsMap["rate-limit"] &
    ModeParamsMap["long-prompt"] &
    ModeParamsMap["cut"] &
    ModeParamsMap["substitute"] &
    ModeParamsMap["inflate-usage"] &
    ModeParamsMap["recognise-probes"];
}
export type ModeParams<M extends LabMode> = ModeParamsMap[M];
/** `{ mode, ...params }`: the body of `POST /__lab/lines/<name>/mode`. */
export type ModeRequest = { [M in LabMode]: { mode: M } & ModeParamsMap[M] }[LabMode];

/** A fault with every parameter resolved. */
export type FaultSetting =
  | { mode: "ok" }
  | { mode: "truncate"; fraction: number }
  | { mode: "drop-fields"; fields: string[] | null }
  | { mode: "stale" }
  | { mode: "downgrade" }
  | { mode: "slow"; latencyMs: number }
  | { mode: "errors"; status: number; rate: number }
  | { mode: "rate-limit"; retryAfterSec: number; rate: number }
  | { mode: "hang" }
  | { mode: "long-prompt"; minPromptChars: number; answer: "empty" | "masked-error" }
  | { mode: "cut"; at: number; how: "end" | "error" }
  | { mode: "substitute"; share: number; differOn: number }
  | { mode: "inflate-usage"; factor: number }
  | { mode: "shape-change" }
  | { mode: "recognise-probes"; by: "fixed-prompt" | "header"; header: string; differOn: number };
export type ModeSetting = FaultSetting | { mode: "flaky"; fault: FaultSetting };

export const DEFAULTS = {
  fraction: 0.3,
  latencyMs: 2000,
  status: 500,
  rate: 1,
  retryAfterSec: 20,
  fault: "errors" as FaultMode,
  minPromptChars: 400,
  answer: "empty" as "empty" | "masked-error",
  at: 0.5,
  how: "end" as "end" | "error",
  share: 1,
  differOn: 0.3,
  factor: 1.2,
  by: "fixed-prompt" as "fixed-prompt" | "header",
  header: "x-probe",
} as const;

const PARAM_KEYS: Record<FaultMode, readonly string[]> = {
  ok: [],
  truncate: ["fraction"],
  "drop-fields": ["fields"],
  stale: [],
  downgrade: [],
  slow: ["latencyMs"],
  errors: ["status", "rate"],
  "rate-limit": ["retryAfterSec", "rate"],
  hang: [],
  "long-prompt": ["minPromptChars", "answer"],
  cut: ["at", "how"],
  substitute: ["share", "differOn"],
  "inflate-usage": ["factor"],
  "shape-change": [],
  "recognise-probes": ["by", "header", "differOn"],
};

export function isLabMode(value: unknown): value is LabMode {
  return typeof value === "string" && (LAB_MODES as readonly string[]).includes(value);
}

/** Validates `{ mode, ...params }`; the error names the offending field. */
export function parseModeRequest(input: unknown): Result<ModeSetting, string> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { ok: false, error: "body must be a JSON object with a `mode`" };
  }
  const body = input as Record<string, unknown>;
  const mode = body.mode;
  if (!isLabMode(mode)) {
    return { ok: false, error: `mode must be one of ${LAB_MODES.join(", ")}; got ${JSON.stringify(mode)}` };
  }
  if (mode !== "flaky") {
    const unknown = unknownKeys(body, PARAM_KEYS[mode]);
    if (unknown) return { ok: false, error: `unknown parameter \`${unknown}\` for mode ${mode}` };
    return parseFault(mode, body);
  }
  const fault = body.fault ?? DEFAULTS.fault;
  if (!isLabMode(fault) || fault === "flaky") {
    const faults = LAB_MODES.filter((m) => m !== "flaky").join(", ");
    return { ok: false, error: `fault must be one of ${faults}; got ${JSON.stringify(fault)}` };
  }
  const unknown = unknownKeys(body, ["fault", ...PARAM_KEYS[fault]]);
  if (unknown) return { ok: false, error: `unknown parameter \`${unknown}\` for mode flaky with fault ${fault}` };
  const parsed = parseFault(fault, body);
  return parsed.ok ? { ok: true, value: { mode: "flaky", fault: parsed.value } } : parsed;
}

function unknownKeys(body: Record<string, unknown>, allowed: readonly string[]): string | null {
  for (const key of Object.keys(body)) {
    if (key !== "mode" && !allowed.includes(key)) return key;
  }
  return null;
}

function parseFault(mode: FaultMode, body: Record<string, unknown>): Result<FaultSetting, string> {
  switch (mode) {
    case "ok":
    case "stale":
    case "downgrade":
    case "hang":
    case "shape-change":
      return { ok: true, value: { mode } };
    case "substitute": {
      const share = numberParam(body, "share", DEFAULTS.share, 0, 1, false);
      if (!share.ok) return share;
      const differOn = numberParam(body, "differOn", DEFAULTS.differOn, 0.1, 1, false);
      return differOn.ok ? { ok: true, value: { mode, share: share.value, differOn: differOn.value } } : differOn;
    }
    case "inflate-usage": {
      const factor = numberParam(body, "factor", DEFAULTS.factor, 0, 100, false);
      return factor.ok ? { ok: true, value: { mode, factor: factor.value } } : factor;
    }
    case "recognise-probes": {
      const by = body.by ?? DEFAULTS.by;
      if (by !== "fixed-prompt" && by !== "header")
        return { ok: false, error: `by must be fixed-prompt or header; got ${JSON.stringify(by)}` };
      const header = body.header ?? DEFAULTS.header;
      if (typeof header !== "string" || !/^[A-Za-z0-9-]{1,64}$/.test(header))
        return { ok: false, error: `header must be a header name; got ${JSON.stringify(header)}` };
      const differOn = numberParam(body, "differOn", DEFAULTS.differOn, 0.1, 1, false);
      return differOn.ok ? { ok: true, value: { mode, by, header: header.toLowerCase(), differOn: differOn.value } } : differOn;
    }
    case "truncate": {
      const fraction = numberParam(body, "fraction", DEFAULTS.fraction, 0, 1, false);
      return fraction.ok ? { ok: true, value: { mode, fraction: fraction.value } } : fraction;
    }
    case "drop-fields": {
      const fields = body.fields;
      if (fields === undefined) return { ok: true, value: { mode, fields: null } };
      if (!Array.isArray(fields) || fields.length === 0 || !fields.every((f) => typeof f === "string")) {
        return { ok: false, error: "fields must be a non-empty array of strings" };
      }
      return { ok: true, value: { mode, fields: fields as string[] } };
    }
    case "slow": {
      const latencyMs = numberParam(body, "latencyMs", DEFAULTS.latencyMs, 0, 600_000, true);
      return latencyMs.ok ? { ok: true, value: { mode, latencyMs: latencyMs.value } } : latencyMs;
    }
    case "errors": {
      const status = numberParam(body, "status", DEFAULTS.status, 400, 599, true);
      if (!status.ok) return status;
      const rate = numberParam(body, "rate", DEFAULTS.rate, 0, 1, false);
      return rate.ok ? { ok: true, value: { mode, status: status.value, rate: rate.value } } : rate;
    }
    case "long-prompt": {
      const minPromptChars = numberParam(body, "minPromptChars", DEFAULTS.minPromptChars, 0, 10_000_000, true);
      if (!minPromptChars.ok) return minPromptChars;
      const answer = body.answer ?? DEFAULTS.answer;
      if (answer !== "empty" && answer !== "masked-error") {
        return { ok: false, error: `answer must be empty or masked-error; got ${JSON.stringify(answer)}` };
      }
      return { ok: true, value: { mode, minPromptChars: minPromptChars.value, answer } };
    }
    case "cut": {
      const at = numberParam(body, "at", DEFAULTS.at, 0, 1, false);
      if (!at.ok) return at;
      const how = body.how ?? DEFAULTS.how;
      if (how !== "end" && how !== "error") return { ok: false, error: `how must be end or error; got ${JSON.stringify(how)}` };
      return { ok: true, value: { mode, at: at.value, how } };
    }
    case "rate-limit": {
      const retryAfterSec = numberParam(body, "retryAfterSec", DEFAULTS.retryAfterSec, 0, 86_400, true);
      if (!retryAfterSec.ok) return retryAfterSec;
      const rate = numberParam(body, "rate", DEFAULTS.rate, 0, 1, false);
      return rate.ok ? { ok: true, value: { mode, retryAfterSec: retryAfterSec.value, rate: rate.value } } : rate;
    }
  }
}

function numberParam(
  body: Record<string, unknown>,
  key: string,
  fallback: number,
  min: number,
  max: number,
  integer: boolean,
): Result<number, string> {
  const value = body[key];
  if (value === undefined) return { ok: true, value: fallback };
  const valid =
    typeof value === "number" && Number.isFinite(value) && value >= min && value <= max && (!integer || Number.isInteger(value));
  if (!valid) {
    const kind = integer ? "an integer" : "a number";
    return { ok: false, error: `${key} must be ${kind} in [${min}, ${max}]; got ${JSON.stringify(value)}` };
  }
  return { ok: true, value };
}
