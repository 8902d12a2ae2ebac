import { OpenAPIHono, type z } from "@hono/zod-openapi";
import { ErrorSchema } from "@linewatch/contract";
import type { AuthEnv } from "../auth";
import { ValidationError } from "../errors";
import { validationErrorFrom } from "../validation";

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

/**
 * Every resource router shares the hook that turns a failed validation into a 400 naming the field,
 * and refuses what validated but cannot be stored (so it never surfaces as a 500 from the database).
 */
export function createRouter() {
  return new OpenAPIHono<AuthEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationErrorFrom(result.error, result.target);
      const problem = unstorable(result.data);
      if (problem) throw ValidationError.field(problem[0] || result.target, problem[1]);
    },
  });
}

const errorResponse = (description: string) => ({ content: { "application/json": { schema: ErrorSchema } }, description });

export const errorResponses = {
  400: errorResponse("Invalid request: the details name each bad field"),
  401: errorResponse("No or unknown token"),
  403: errorResponse("The token's role may not do this"),
  404: errorResponse("Not found"),
  409: errorResponse("Conflict (duplicate name, or still referenced)"),
  413: errorResponse("Body over 1 MiB"),
} as const;

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  body: { content: { "application/json": { schema } }, required: true },
});
