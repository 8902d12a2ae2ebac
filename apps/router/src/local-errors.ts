// The errors the router makes itself (bad JSON, no line, body too large, all lines failed…), in the
// shape the client's API uses, so its SDK raises its own typed error (docs/router.md).
import type { ErrorDialect } from "./surfaces";

export interface LocalError {
  status: number;
  /** Machine-readable: `invalid_json`, `missing_model`, `model_not_found`, `protocol_not_served`, `no_line_available`… */
  code: string;
  message: string;
  /** The request field at fault, if one is. */
  param?: string | null;
}

/** Anthropic's error types by status (https://docs.claude.com/en/api/errors). */
function anthropicType(status: number): string {
  if (status === 400) return "invalid_request_error";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  return status >= 500 ? "api_error" : "invalid_request_error";
}

/** OpenAI: `{"error": {message, type, param, code}}`. Anthropic: `{"type": "error", "error": {type, message, details}}`. */
export function localErrorBody(dialect: ErrorDialect, e: LocalError): object {
  if (dialect === "anthropic") {
    return { type: "error", error: { type: anthropicType(e.status), message: e.message, details: { error_code: e.code } } };
  }
  const type = e.status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message: e.message, type, param: e.param ?? null, code: e.code } };
}
