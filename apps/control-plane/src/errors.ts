import type { ContentfulStatusCode } from "hono/utils/http-status";

export type ErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "payload_too_large"
  | "unavailable"
  | "internal";

export interface ErrorDetail {
  field?: string;
  message: string;
}

/** A typed error at the HTTP edge; one onError turns it into the docs/api.md envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
  }
}

export class ValidationError extends ApiError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(400, "invalid_request", message, details);
  }
  static field(field: string, message: string): ValidationError {
    return new ValidationError(`${field}: ${message}`, [{ field, message }]);
  }
}

export class NotFoundError extends ApiError {
  constructor(what: string) {
    super(404, "not_found", `${what} not found`);
  }
  /** A body field names something that does not exist: 404 naming the field. */
  static reference(field: string, what: string, hint = ""): ApiError {
    return new ApiError(404, "not_found", `${field}: ${what} does not exist${hint}`, [{ field, message: `${what} does not exist` }]);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(409, "conflict", message, details);
  }
}

export function envelope(code: ErrorCode, message: string, details: ErrorDetail[] = []) {
  return { error: { code, message, details } };
}
