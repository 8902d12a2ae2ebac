// Paths into JSON values: `usage.total_tokens`, `choices.0.message`, `choices[0].message`.

export function parsePath(path: string): string[] {
  return path
    .replace(/\[(\d+)\]/g, ".$1")
    .split(".")
    .filter((segment) => segment !== "");
}

/** The value at `path`, or undefined. Only own properties: `constructor` is not a field. */
export function getPath(value: unknown, path: string | readonly string[]): unknown {
  const segments = typeof path === "string" ? parsePath(path) : path;
  let current: unknown = value;
  for (const segment of segments) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else if (typeof current === "object" && current !== null && Object.hasOwn(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return current;
}
