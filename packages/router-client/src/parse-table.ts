import { type RouteTable, TABLE_MODES, type TableLine, type TableMode } from "./types";

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function parseHeaders(v: unknown, at: string): ParseResult<Record<string, string> | undefined> {
  if (v === undefined) return { ok: true, value: undefined };
  if (!isRecord(v)) return { ok: false, error: `${at}.headers: not an object` };
  const headers: Record<string, string> = {};
  for (const [k, hv] of Object.entries(v)) {
    if (typeof hv !== "string") return { ok: false, error: `${at}.headers.${k}: not a string` };
    headers[k] = hv;
  }
  return { ok: true, value: headers };
}

const TEXT_FIELDS = ["id", "name", "tier", "state", "protocol", "baseUrl", "model"] as const;

function parseLine(v: unknown, at: string): ParseResult<TableLine> {
  if (!isRecord(v)) return { ok: false, error: `${at}: not an object` };
  const notText = TEXT_FIELDS.find((f) => typeof v[f] !== "string");
  if (notText) return { ok: false, error: `${at}.${notText}: not a string` };
  const { weight, apiKey } = v;
  if (typeof weight !== "number" || !Number.isInteger(weight) || weight < 0) {
    return { ok: false, error: `${at}.weight: not a non-negative integer` };
  }
  if (apiKey !== undefined && apiKey !== null && typeof apiKey !== "string") {
    return { ok: false, error: `${at}.apiKey: not a string or null` };
  }
  const headers = parseHeaders(v.headers, at);
  if (!headers.ok) return headers;
  // Each text field was checked to be a string above; String() only tells the compiler.
  const text = (f: (typeof TEXT_FIELDS)[number]) => String(v[f]);
  const line: TableLine = {
    id: text("id"),
    name: text("name"),
    tier: text("tier"),
    state: text("state"),
    weight,
    protocol: text("protocol"),
    baseUrl: text("baseUrl"),
    model: text("model"),
  };
  // Credentials only where the control plane sent them (a router token): absent stays absent.
  if (apiKey !== undefined) line.apiKey = apiKey;
  if (headers.value !== undefined) line.headers = headers.value;
  return { ok: true, value: line };
}

const isMode = (v: unknown): v is TableMode => TABLE_MODES.some((m) => m === v);

/**
 * Checks a table from the control plane (or the cache file) before it may replace the last
 * good one: a malformed answer must never take traffic down.
 */
export function parseTable(v: unknown): ParseResult<RouteTable> {
  if (!isRecord(v)) return { ok: false, error: "table: not an object" };
  const { route, version, generatedAt, mode, lines } = v;
  if (typeof route !== "string" || route === "") return { ok: false, error: "route: not a string" };
  if (typeof version !== "number" || !Number.isSafeInteger(version)) return { ok: false, error: "version: not an integer" };
  if (typeof generatedAt !== "string") return { ok: false, error: "generatedAt: not a string" };
  if (!isMode(mode)) return { ok: false, error: "mode: not normal|degraded|panic" };
  if (!Array.isArray(lines)) return { ok: false, error: "lines: not an array" };
  const parsed: TableLine[] = [];
  const ids = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const line = parseLine(lines[i], `lines[${i}]`);
    if (!line.ok) return line;
    if (ids.has(line.value.id)) return { ok: false, error: `lines[${i}].id: duplicate` };
    ids.add(line.value.id);
    parsed.push(line.value);
  }
  return { ok: true, value: { route, version, generatedAt, mode, lines: parsed } };
}
