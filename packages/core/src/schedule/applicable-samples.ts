// Which golden samples probe a line (docs/api.md).
import type { Line, Sample } from "../types";

/** A sample applies to a line of its protocol, on every route (empty list) or on one of the line's routes; by name. */
export function applicableSamples(line: Pick<Line, "protocol" | "routes">, samples: Iterable<Sample>): Sample[] {
  const routes = new Set(line.routes.map((r) => r.route));
  return [...samples]
    .filter((s) => s.protocol === line.protocol && (s.routes.length === 0 || s.routes.some((r) => routes.has(r))))
    .sort((a, b) => a.name.localeCompare(b.name));
}
