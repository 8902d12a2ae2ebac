// The lines of a stored table, read back at the database edge. A row written by another version of
// linewatch may hold another shape: then null, and the next publish starts a new version.
import { TABLE_MODES, type TableMode, TOTAL_WEIGHT } from "./compute-table";
import type { PublishedLine } from "./publish-table";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function parseLine(v: unknown): PublishedLine | null {
  if (!isRecord(v)) return null;
  const lineId = typeof v.lineId === "string" ? v.lineId : v.id;
  const { weight, name, tier, state, protocol, baseUrl, model } = v;
  if (typeof lineId !== "string" || typeof weight !== "number" || !Number.isInteger(weight) || weight < 0 || weight > TOTAL_WEIGHT) {
    return null;
  }
  if (
    typeof name !== "string" ||
    typeof tier !== "string" ||
    typeof state !== "string" ||
    typeof protocol !== "string" ||
    typeof baseUrl !== "string" ||
    typeof model !== "string"
  ) {
    return null;
  }
  // A row without a credentials revision compares unequal to any new one: one extra version, never a stale key.
  const credentials = typeof v.credentials === "string" ? v.credentials : "";
  return { lineId, id: lineId, weight, name, tier, state, protocol, baseUrl, model, credentials };
}

/** The lines of a stored table, or null when they are not in the shape PublishedLine describes. */
export function parsePublishedLines(stored: unknown): PublishedLine[] | null {
  if (!Array.isArray(stored)) return null;
  const lines: PublishedLine[] = [];
  for (const item of stored) {
    const line = parseLine(item);
    if (!line) return null;
    lines.push(line);
  }
  return lines;
}

export const parseTableMode = (stored: unknown): TableMode | null => TABLE_MODES.find((m) => m === stored) ?? null;
