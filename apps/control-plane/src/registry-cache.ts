import type { HealthPolicy, Line, Route, Sample } from "@linewatch/core";
import { DEFAULT_HEALTH_POLICY, resolveHealthPolicy } from "@linewatch/core";
import { listLineRows, listRouteRows, listSamples, toLine } from "@linewatch/db";
import type { AppDeps } from "./deps";

export interface CachedLine extends Line {
  /** Decrypted upstream key, for probes only: never serialised into a response. */
  apiKey: string | null;
}

export interface CachedRoute extends Route {
  policy: Record<string, unknown> | null;
}

export interface RegistrySnapshot {
  lines: Map<string, CachedLine>;
  samples: Map<string, Sample>;
  routes: Map<string, CachedRoute>;
  loadedAt: number;
}

/**
 * The registry as the prober and publisher read it, refreshed on change (this replica's API calls)
 * and every `ttlMs` (other replicas' changes). Probing 1000 lines must not re-read them per probe.
 */
export class RegistryCache {
  private snapshot: RegistrySnapshot | null = null;
  private loading: Promise<RegistrySnapshot> | null = null;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "secrets" | "logger">,
    private readonly ttlMs = 10_000,
  ) {}

  invalidate(): void {
    this.snapshot = null;
  }

  async get(): Promise<RegistrySnapshot> {
    const now = this.deps.clock.now();
    if (this.snapshot && now - this.snapshot.loadedAt < this.ttlMs) return this.snapshot;
    this.loading ??= this.load().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async load(): Promise<RegistrySnapshot> {
    const db = this.deps.database.db;
    const [lineRows, samples, routeRows] = await Promise.all([listLineRows(db), listSamples(db), listRouteRows(db)]);
    const lines = new Map<string, CachedLine>();
    for (const { row, routes } of lineRows) {
      let apiKey: string | null = null;
      if (row.apiKeyEnc) {
        try {
          apiKey = this.deps.secrets.decrypt(row.apiKeyEnc);
        } catch (error) {
          // Probes then go without a key and fail visibly (401), instead of the control plane stopping.
          this.deps.logger.error("cannot decrypt a line's API key", { line: row.name, error: String(error) });
        }
      }
      lines.set(row.id, { ...toLine(row, routes), apiKey });
    }
    const routes = new Map<string, CachedRoute>(
      routeRows.map((r) => [
        r.name,
        { name: r.name, freeShareCap: r.freeShareCap, onAllDown: r.onAllDown as Route["onAllDown"], createdAt: r.createdAt.toISOString(), policy: r.policy ?? null },
      ]),
    );
    this.snapshot = { lines, samples: new Map(samples.map((s) => [s.id, s])), routes, loadedAt: this.deps.clock.now() };
    return this.snapshot;
  }
}

/** SPEC §3: a sample applies to a line of its protocol, on every route (empty list) or on one of the line's routes. */
export function applicableSamples(line: Pick<Line, "protocol" | "routes">, samples: Iterable<Sample>): Sample[] {
  const routes = new Set(line.routes.map((r) => r.route));
  return [...samples]
    .filter((s) => s.protocol === line.protocol && (s.routes.length === 0 || s.routes.some((r) => routes.has(r))))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The health policy of a line: the defaults with its routes' overrides applied in route-name order
 * (health is per line; a line on several routes with clashing overrides takes the last one's).
 */
export function linePolicy(line: Pick<Line, "routes">, routes: Map<string, CachedRoute>): HealthPolicy {
  const overrides = line.routes
    .map((m) => routes.get(m.route)?.policy)
    .filter((p): p is Record<string, unknown> => !!p)
    .map((p) => p as Partial<HealthPolicy>);
  const resolved = resolveHealthPolicy(...overrides);
  return resolved.ok ? resolved.value : { ...DEFAULT_HEALTH_POLICY, probationSteps: [...DEFAULT_HEALTH_POLICY.probationSteps] };
}
