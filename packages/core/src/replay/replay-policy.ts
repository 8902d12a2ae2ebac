// A proposed policy for a replay: a route's health-policy overrides (the same fields, the same
// checks) plus, optionally, a new scoring (component weights, pass score) to re-score the stored
// components with.
import { DEFAULT_HEALTH_POLICY, type HealthPolicy, resolveHealthPolicy } from "../health/index";
import { COMPONENT_NAMES, DEFAULT_WEIGHTS, PASS_SCORE, type ScoreWeights } from "../scoring/weights";
import { err, ok, type Result } from "../types";
import type { ReplayScoring } from "./probe-event";
import type { ReplayLine } from "./timeline";

export interface ReplayPolicy {
  overrides: Partial<HealthPolicy>;
  scoring: ReplayScoring | null;
}

export interface FieldProblem {
  field: string;
  message: string;
}

/** The fields a route's policy override may set (as `PATCH /v1/routes/:name` accepts them). */
export const OVERRIDE_FIELDS: readonly string[] = Object.keys(DEFAULT_HEALTH_POLICY).filter(
  (k) => k !== "freeShareCap" && k !== "probationSteps",
);

const problemsOf = (prefix: string, problems: string[]): FieldProblem[] =>
  problems.map((p) => {
    const [key, ...rest] = p.split(":");
    return { field: `${prefix}${key}`, message: rest.join(":").trim() };
  });

/** Why a route's policy override is refused: fields it may not set (checked first), or values out of bounds. */
export type OverrideProblem = { kind: "unknown"; fields: string[] } | { kind: "invalid"; problems: FieldProblem[] };

/**
 * A route's policy override, as `POST`/`PATCH /v1/routes` and the registry file check it: it names
 * known thresholds only, and the policy it makes is usable. Problems name `policy.<name>`.
 */
export function checkRouteOverrides(policy: Readonly<Record<string, number>>): Result<Partial<HealthPolicy>, OverrideProblem> {
  const unknown = Object.keys(policy).filter((k) => !OVERRIDE_FIELDS.includes(k));
  if (unknown.length > 0) return err({ kind: "unknown", fields: unknown });
  const resolved = resolveHealthPolicy(policy);
  return resolved.ok ? ok(policy) : err({ kind: "invalid", problems: problemsOf("policy.", resolved.error) });
}

/** Checks a proposed policy (e.g. a parsed YAML/JSON file); problems name the field as `policy.<name>`. */
export function parseReplayPolicy(input: unknown): Result<ReplayPolicy, FieldProblem[]> {
  if (input === undefined || input === null) return ok({ overrides: {}, scoring: null });
  if (typeof input !== "object" || Array.isArray(input)) return err([{ field: "policy", message: "an object of thresholds" }]);
  const problems: FieldProblem[] = [];
  const overrides: Record<string, number> = {};
  let weights: ScoreWeights | null = null;
  let passScore: number | null = null;
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    if (key === "weights") {
      weights = parseWeights(value, problems);
    } else if (key === "passScore") {
      if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 100)
        problems.push({ field: "policy.passScore", message: "a number in [0, 100]" });
      else passScore = value;
    } else if (!OVERRIDE_FIELDS.includes(key)) {
      problems.push({
        field: `policy.${key}`,
        message: `unknown field (known: ${[...OVERRIDE_FIELDS, "weights", "passScore"].join(", ")})`,
      });
    } else if (typeof value !== "number" && !(key === "reprobeDelayMs" && value === null)) {
      problems.push({ field: `policy.${key}`, message: "a number" });
    } else overrides[key] = value as number;
  }
  if (problems.length > 0) return err(problems);
  const resolved = resolveHealthPolicy(overrides as Partial<HealthPolicy>);
  if (!resolved.ok) return err(problemsOf("policy.", resolved.error));
  const scoring =
    weights === null && passScore === null ? null : { weights: weights ?? { ...DEFAULT_WEIGHTS }, passScore: passScore ?? PASS_SCORE };
  return ok({ overrides: overrides as Partial<HealthPolicy>, scoring });
}

function parseWeights(value: unknown, problems: FieldProblem[]): ScoreWeights | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push({ field: "policy.weights", message: `an object of component weights (${COMPONENT_NAMES.join(", ")})` });
    return null;
  }
  const weights: ScoreWeights = { ...DEFAULT_WEIGHTS };
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (!(COMPONENT_NAMES as readonly string[]).includes(k)) {
      problems.push({ field: `policy.weights.${k}`, message: `unknown component (known: ${COMPONENT_NAMES.join(", ")})` });
    } else if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      problems.push({ field: `policy.weights.${k}`, message: "a number ≥ 0" });
    } else weights[k as keyof ScoreWeights] = v;
  }
  if (COMPONENT_NAMES.every((n) => weights[n] === 0)) problems.push({ field: "policy.weights", message: "at least one weight above 0" });
  return weights;
}

/**
 * The policy a line would run under: the defaults, its routes' overrides in route-name order (as
 * linePolicy applies them), then the proposed overrides on top. Problems name `policy.<field>`.
 */
export function proposedLinePolicy(
  line: Pick<ReplayLine, "routes">,
  routes: ReadonlyMap<string, { policy: Partial<HealthPolicy> | null }>,
  overrides: Partial<HealthPolicy>,
): Result<HealthPolicy, FieldProblem[]> {
  const routeOverrides = [...line.routes]
    .map((m) => m.route)
    .sort()
    .map((name) => routes.get(name)?.policy ?? null);
  const resolved = resolveHealthPolicy(...routeOverrides, overrides);
  return resolved.ok ? ok(resolved.value) : err(problemsOf("policy.", resolved.error));
}
