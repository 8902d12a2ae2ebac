import { type RouteTable, TABLE_MODES, type TableLine, type TableMode } from "./types";

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function parseLine(v: unknown, at: string): ParseResult<TableLine> {
  if (!isRecord(v)) return { ok: false, error: `${at}: not an object` };
  for (const field of ["id", "name", "tier", "state", "protocol", "baseUrl", "model"] as const) {
    if (typeof v[field] !== "string") return { ok: false, error: `${at}.${field}: not a string` };
  }
  const weight = v.weight;
  if (typeof weight !== "number" || !Number.isInteger(weight) || weight < 0) {
    return { ok: false, error: `${at}.weight: not a non-negative integer` };
  }
  const apiKey = v.apiKey;
  if (apiKey !== undefined && apiKey !== null && typeof apiKey !== "string") {
    return { ok: false, error: `${at}.apiKey: not a string or null` };
  }
  const headers = v.headers;
  if (headers !== undefined) {
    if (!isRecord(headers)) return { ok: false, error: `${at}.headers: not an object` };
    for (const [k, hv] of Object.entries(headers)) {
      if (typeof hv !== "string") return { ok: false, error: `${at}.headers.${k}: not a string` };
    }
  }
  return { ok: true, value: v as unknown as TableLine };
}

/**
 * Checks a table from the control plane (or the cache file) before it may replace the last
 * good one: a malformed answer must never take traffic down.
 */
export function parseTable(v: unknown): ParseResult<RouteTable> {
  if (!isRecord(v)) return { ok: false, error: "table: not an object" };
  if (typeof v.route !== "string" || v.route === "") return { ok: false, error: "route: not a string" };
  if (typeof v.version !== "number" || !Number.isSafeInteger(v.version)) {
    return { ok: false, error: "version: not an integer" };
  }
  if (typeof v.generatedAt !== "string") return { ok: false, error: "generatedAt: not a string" };
  if (!TABLE_MODES.includes(v.mode as TableMode)) return { ok: false, error: "mode: not normal|degraded|panic" };
  if (!Array.isArray(v.lines)) return { ok: false, error: "lines: not an array" };
  const ids = new Set<string>();
  for (let i = 0; i < v.lines.length; i++) {
    const line = parseLine(v.lines[i], `lines[${i}]`);
    if (!line.ok) return line;
    if (ids.has(line.value.id)) return { ok: false, error: `lines[${i}].id: duplicate` };
    ids.add(line.value.id);
  }
  return { ok: true, value: v as unknown as RouteTable };
}
