import { sql } from "drizzle-orm";
import type { Db } from "../client";
import { executeRows } from "./probe-results";

/**
 * A short text that changes when lines, samples, routes or memberships do: counts, the newest
 * `updated_at` of each table and the memberships' weight sum. Every write through the API moves one
 * of them, so a registry cache can ask for this (one small statement) instead of reloading and
 * decrypting every line to learn that nothing changed.
 */
export async function registryFingerprint(db: Db): Promise<string> {
  const result = await db.execute(sql`
    select concat_ws('|',
      (select count(*) || '/' || coalesce(max(updated_at)::text, '') from lines),
      (select count(*) || '/' || coalesce(max(updated_at)::text, '') from samples),
      (select count(*) || '/' || coalesce(max(updated_at)::text, '') from routes),
      (select count(*) || '/' || coalesce(sum(weight)::text, '') from route_lines)) as fingerprint`);
  return executeRows<{ fingerprint: string }>(result)[0]?.fingerprint ?? "";
}
