import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { parseTable } from "./parse-table";
import type { RouteTable } from "./types";

const FORMAT = "linewatch-router-tables/1";

export interface SavedTable {
  table: RouteTable;
  /** ms since epoch of the last successful pull of this table, if any. */
  pulledAt: number | null;
}

export interface LoadedTables {
  savedAt: string | null;
  tables: Map<string, SavedTable>;
  /** Entries that were present but failed validation. */
  rejected: string[];
}

/**
 * Writes the last good tables atomically: a temp file in the same folder, then rename, so a
 * crash mid-write leaves the previous file whole. Mode 0600: the tables carry upstream keys.
 */
export async function saveTables(path: string, tables: Iterable<[string, SavedTable]>, now: number): Promise<void> {
  const body = {
    format: FORMAT,
    savedAt: new Date(now).toISOString(),
    routes: Object.fromEntries(tables),
  };
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(tmp, `${JSON.stringify(body)}\n`, { mode: 0o600 });
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

/** Null when the file does not exist; throws when it exists but is not a tables file. */
export async function loadTables(path: string): Promise<LoadedTables | null> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
  const doc = JSON.parse(text) as { format?: unknown; savedAt?: unknown; routes?: unknown };
  if (doc.format !== FORMAT || typeof doc.routes !== "object" || doc.routes === null) {
    throw new Error(`${path}: not a ${FORMAT} file`);
  }
  const tables = new Map<string, SavedTable>();
  const rejected: string[] = [];
  for (const [route, entry] of Object.entries(doc.routes as Record<string, unknown>)) {
    const e = entry as { table?: unknown; pulledAt?: unknown } | null;
    const parsed = parseTable(e?.table);
    if (!parsed.ok || parsed.value.route !== route) {
      rejected.push(route);
      continue;
    }
    tables.set(route, { table: parsed.value, pulledAt: typeof e?.pulledAt === "number" ? e.pulledAt : null });
  }
  return { savedAt: typeof doc.savedAt === "string" ? doc.savedAt : null, tables, rejected };
}
