/** PostgreSQL unique violation, whichever driver (and drizzle's wrapper) raised it. */
export function isUniqueViolation(error: unknown): boolean {
  return pgCode(error) === "23505";
}

/** The first `code` on the error or its causes (a SQLSTATE, or a driver's or Node's code). */
function pgCode(error: unknown): string | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < 4 && e && typeof e === "object"; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** postgres.js and Node codes of a connection that failed or was lost (not of a statement that failed). */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, shutting down)
]);

/** The database could not be reached (as opposed to refusing a statement): docs/api.md's `unavailable`. */
export function isConnectionError(error: unknown): boolean {
  const code = pgCode(error);
  // SQLSTATE class 08: connection exception.
  if (code !== undefined && (CONNECTION_CODES.has(code) || code.startsWith("08"))) return true;
  // The embedded database has no connection to lose, only a closed instance (no code of its own).
  for (let e: unknown = error, depth = 0; depth < 4 && e instanceof Error; depth++, e = e.cause) {
    if (e.message === "PGlite is closed") return true;
  }
  return false;
}

/**
 * What may be logged about an error: its class, its code and, for a failed query, the statement's
 * kind and table (`insert into "lines"`). Never its message: drizzle's carries every parameter
 * (an encrypted key, a header value), and PostgreSQL's may quote the offending value.
 */
export function errorSummary(error: unknown): { error: string; code?: string; statement?: string } {
  const name = error instanceof Error ? error.name || "Error" : typeof error;
  const code = pgCode(error);
  let query: unknown;
  for (let e: unknown = error, depth = 0; depth < 4 && e && typeof e === "object"; depth++, e = (e as { cause?: unknown }).cause) {
    query = (e as { query?: unknown }).query;
    if (typeof query === "string") break;
  }
  const out: { error: string; code?: string; statement?: string } = { error: name };
  if (code) out.code = code;
  if (typeof query === "string") {
    const kind = /^\s*(with|select|insert|update|delete|alter|create|drop|vacuum)\b/i.exec(query)?.[1]?.toLowerCase() ?? "query";
    const table = /\b(?:from|into|update|join)\s+("[^"]+"|[a-z_][\w.]*)/i.exec(query)?.[1];
    out.statement = table ? `${kind} ${table}` : kind;
  } else if (!code && error instanceof Error && !(error as { params?: unknown }).params) {
    // Not a query error: its message is the program's own words (e.g. "Invalid time value").
    out.error = `${name}: ${error.message.slice(0, 300)}`;
  }
  return out;
}
