// What every resource of the API shares on the wire: names, ids, the error envelope.
import { z } from "@hono/zod-openapi";

/** Names that appear in URLs and CLI arguments. */
export const NameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, "letters, digits and . _ : - only, starting with a letter or digit");

export const IdParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An id that cannot be a uuid cannot name anything: it is simply not found. */
export const isUuid = (id: string) => UUID.test(id);

/** The error envelope of docs/api.md: every 4xx and 5xx of the API has this body. */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "invalid_request" }),
      message: z.string(),
      details: z.array(z.object({ field: z.string().optional(), message: z.string() })),
    }),
  })
  .openapi("Error");

export type ErrorEnvelope = z.infer<typeof ErrorSchema>;
