import { OpenAPIHono, type z } from "@hono/zod-openapi";
import { ErrorSchema } from "@linewatch/contract";
import type { AuthEnv } from "../auth";
import { ValidationError } from "../errors";
import { unstorable, validationErrorFrom } from "../validation";

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
