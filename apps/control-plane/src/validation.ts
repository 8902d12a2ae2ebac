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
