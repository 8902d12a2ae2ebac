// Small helpers the adapters share: URLs, headers, JSON and error bodies.
import type { AnswerUsage, ParsedResponse } from "./types";

export function joinUrl(baseUrl: string, path: string): string {
  return baseUrl.replace(/\/+$/, "") + path;
}

/**
 * Later sources win; names are lower-cased so `Authorization` and `authorization` cannot both
 * be sent. The line's own headers come last: an operator who sets one means it.
 */
export function mergeHeaders(...sources: Record<string, string>[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const source of sources) {
    for (const [name, value] of Object.entries(source)) out[name.toLowerCase()] = value;
  }
  return out;
}

/**
 * A probe's body as an SDK call writes it: `model` first, then the sample's request, then `stream`
 * when asked (the SDKs' `create({ model, ...params })` order).
 */
export function probeBody(model: string, filledRequest: Record<string, unknown>, stream: boolean | undefined): string {
  const body: Record<string, unknown> = { model, ...filledRequest };
  body.model = model;
  if (stream !== undefined) body.stream = stream;
  return JSON.stringify(body);
}

export const NO_USAGE: AnswerUsage = Object.freeze({ input: null, output: null });

/** Input and output together, or null when neither is known. */
export function totalTokens(usage: AnswerUsage): number | null {
  return usage.input === null && usage.output === null ? null : (usage.input ?? 0) + (usage.output ?? 0);
}

export function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

export function is2xx(status: number): boolean {
  return status >= 200 && status < 300;
}

export type JsonParse = { ok: true; value: unknown } | { ok: false; message: string };

export function parseJson(text: string): JsonParse {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, message: e instanceof Error ? e.message : String(e) };
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function finiteOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

export function excerpt(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** The message of an error body in the OpenAI, Anthropic or plain `{message}` shape, if any. */
export function errorMessageOf(json: unknown): string | null {
  if (!isRecord(json)) return null;
  const error = json.error;
  if (typeof error === "string") return error;
  if (isRecord(error)) {
    if (typeof error.message === "string") return error.message;
    if (typeof error.type === "string") return error.type;
    return "error object in body";
  }
  if (json.type === "error" && typeof json.message === "string") return json.message;
  return null;
}

/** Non-2xx: say what the upstream said, briefly. */
export function httpErrorResult(status: number, bodyText: string): ParsedResponse {
  const parsed = parseJson(bodyText);
  const upstream = (parsed.ok ? errorMessageOf(parsed.value) : null) ?? excerpt(bodyText);
  return {
    ok: false,
    errorClass: "protocol",
    message: upstream ? `HTTP ${status}: ${upstream}` : `HTTP ${status}`,
  };
}

export function parseError(what: string, message: string): ParsedResponse {
  return { ok: false, errorClass: "parse", message: `${what}: ${message}` };
}

export function protocolError(message: string): ParsedResponse {
  return { ok: false, errorClass: "protocol", message };
}
