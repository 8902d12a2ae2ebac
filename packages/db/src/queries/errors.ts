/** PostgreSQL unique violation, whichever driver (and drizzle's wrapper) raised it. */
export function isUniqueViolation(error: unknown): boolean {
  return pgCode(error) === "23505";
}

function pgCode(error: unknown): string | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < 4 && e && typeof e === "object"; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
