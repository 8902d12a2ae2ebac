import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { AuthEnv } from "../auth";
import { validationErrorFrom } from "../validation";

/** Every resource router shares the hook that turns a failed validation into a 400 naming the field. */
export function createRouter() {
  return new OpenAPIHono<AuthEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationErrorFrom(result.error, result.target);
    },
  });
}

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "invalid_request" }),
      message: z.string(),
      details: z.array(z.object({ field: z.string().optional(), message: z.string() })),
    }),
  })
  .openapi("Error");

const errorResponse = (description: string) => ({ content: { "application/json": { schema: ErrorSchema } }, description });

export const errorResponses = {
  400: errorResponse("Invalid request: the details name each bad field"),
  401: errorResponse("No or unknown token"),
  403: errorResponse("The token's role may not do this"),
  404: errorResponse("Not found"),
  409: errorResponse("Conflict (duplicate name, or still referenced)"),
  413: errorResponse("Body over 1 MiB"),
} as const;

/** Names that appear in URLs and CLI arguments. */
export const NameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, "letters, digits and . _ : - only, starting with a letter or digit");

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  body: { content: { "application/json": { schema } }, required: true },
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An id that cannot be a uuid cannot name anything: it is simply not found. */
export const isUuid = (id: string) => UUID.test(id);

export const IdParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
