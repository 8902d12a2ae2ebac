import type { z } from "@hono/zod-openapi";
import { type ErrorDetail, ValidationError } from "./errors";

/** Turn zod issues into a 400 that names each bad field. */
export function validationErrorFrom(error: z.ZodError, target: string): ValidationError {
  const details: ErrorDetail[] = error.issues.flatMap((issue): ErrorDetail[] => {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ field: base ? `${base}.${key}` : key, message: "unknown field" }));
    }
    return [{ field: base || target, message: issue.message }];
  });
  const first = details[0];
  const message = first ? `${first.field}: ${first.message}` : `invalid ${target}`;
  return new ValidationError(details.length > 1 ? `${message} (and ${details.length - 1} more)` : message, details);
}

/** Deeper JSON than any request body needs; deeper would overflow the stack on the way to the database. */
export const MAX_JSON_DEPTH = 32;
const MIN_NONZERO = 1e-30;

/** An unpaired UTF-16 surrogate: JSON can carry it (`"\\ud800"`) but no UTF-8 column can hold it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a string (a value or a key) cannot be stored as text, or null. */
function textProblem(s: string): string | null {
  if (s.includes("\u0000")) return "must not contain U+0000";
  if (LONE_SURROGATE.test(s)) return "must not contain an unpaired UTF-16 surrogate";
  return null;
}

/**
 * What PostgreSQL cannot store or the shell cannot walk, found without recursion: a U+0000 or an
 * unpaired surrogate in a string or key (text and jsonb refuse both), a number too close to 0 for a real column, or nesting
 * past MAX_JSON_DEPTH. Returns [field, problem].
 */
export function unstorable(value: unknown): [string, string] | null {
  const stack: [unknown, string[]][] = [[value, []]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, path] = top;
    if (typeof v === "string") {
      const problem = textProblem(v);
      if (problem) return [path.join("."), problem];
    } else if (typeof v === "number") {
      // PostgreSQL's real underflows below ~1e-38; nothing here needs a value that close to 0.
      if (v !== 0 && Math.abs(v) < MIN_NONZERO) return [path.join("."), `must be 0 or at least ${MIN_NONZERO} away from it`];
    } else if (v !== null && typeof v === "object") {
      if (path.length >= MAX_JSON_DEPTH) return [path.join("."), `nested deeper than ${MAX_JSON_DEPTH} levels`];
      for (const [k, child] of Object.entries(v)) {
        const problem = textProblem(k);
        if (problem) return [path.join("."), `a key ${problem}`];
        stack.push([child, [...path, k]]);
      }
    }
  }
  return null;
}
