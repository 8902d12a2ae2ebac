// The health policy a line runs under: the defaults with its routes' overrides (docs/health.md).
import type { RouteMembership } from "../types";
import { DEFAULT_HEALTH_POLICY, type HealthPolicy, resolveHealthPolicy } from "./policy";

/** What a route contributes to its lines' policy: its overrides, if it has any. */
export interface PolicySource {
  policy: Partial<HealthPolicy> | null;
}

/**
 * The health policy of a line: the defaults with its routes' overrides applied in route-name order
 * (health is per line; a line on several routes with clashing overrides takes the last one's). An
 * override set that does not check out (stored before a bound existed) falls back to the defaults.
 */
export function linePolicy(line: { routes: readonly RouteMembership[] }, routes: ReadonlyMap<string, PolicySource>): HealthPolicy {
  const overrides = [...line.routes]
    .map((m) => m.route)
    .sort()
    .map((name) => routes.get(name)?.policy ?? null)
    .filter((p): p is Partial<HealthPolicy> => p !== null);
  const resolved = resolveHealthPolicy(...overrides);
  return resolved.ok ? resolved.value : { ...DEFAULT_HEALTH_POLICY, probationSteps: [...DEFAULT_HEALTH_POLICY.probationSteps] };
}
