// One attempt at one line over undici (keep-alive pools per origin; not global fetch, which
// costs several times the CPU). No retry here: proxy.ts decides.
import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";
import type { TableLine } from "@linewatch/router-client";

export type AttemptError = "unreachable" | "timeout" | "aborted";

export type AttemptResult =
  | { ok: true; status: number; headers: IncomingHttpHeaders; body: Dispatcher.ResponseData["body"]; seconds: number }
  | { ok: false; error: AttemptError; message: string; seconds: number };

/** Where a line's requests go, worked out once per line object (lines are immutable per table version). */
interface LineTarget {
  origin: string;
  /** The base URL's path without a trailing slash, e.g. `/v1`. */
  pathPrefix: string;
  /** Credential and line headers, lower-cased names. */
  headers: Record<string, string>;
}

const targets = new WeakMap<TableLine, LineTarget>();

function targetOf(line: TableLine): LineTarget {
  let t = targets.get(line);
  if (t === undefined) {
    const url = new URL(line.baseUrl);
    const headers: Record<string, string> = {};
    if (line.apiKey) headers.authorization = `Bearer ${line.apiKey}`;
    for (const [k, v] of Object.entries(line.headers ?? {})) headers[k.toLowerCase()] = v;
    t = { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, ""), headers };
    targets.set(line, t);
  }
  return t;
}

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);

export function classifyError(e: unknown, signal: AbortSignal | undefined): AttemptError {
  if (signal?.aborted) return "aborted";
  const code = (e as { code?: string }).code;
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") return "timeout";
  if (code === "UND_ERR_ABORTED" || code === "UND_ERR_ABORT") return "aborted";
  if (code !== undefined && UNREACHABLE.has(code)) return "unreachable";
  const cause = (e as { cause?: unknown }).cause;
  if (cause !== undefined && cause !== e) return classifyError(cause, signal);
  // Anything else on the way to the upstream (TLS, a malformed answer) is the line's fault too.
  return "unreachable";
}

export interface AttemptInput {
  dispatcher: Dispatcher;
  line: TableLine;
  /** Path after `/v1`, with the query string: `/chat/completions`. */
  path: string;
  body: string;
  accept: string | undefined;
  timeoutMs: number;
  signal: AbortSignal | undefined;
}

export async function attemptLine(input: AttemptInput): Promise<AttemptResult> {
  const t = targetOf(input.line);
  const started = performance.now();
  try {
    const res = await input.dispatcher.request({
      origin: t.origin,
      path: t.pathPrefix + input.path,
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: input.accept ?? "application/json",
        ...t.headers,
        "content-length": String(Buffer.byteLength(input.body)),
      },
      body: input.body,
      headersTimeout: input.timeoutMs,
      bodyTimeout: input.timeoutMs,
      signal: input.signal ?? null,
    });
    return { ok: true, status: res.statusCode, headers: res.headers, body: res.body, seconds: (performance.now() - started) / 1000 };
  } catch (e) {
    return {
      ok: false,
      error: classifyError(e, input.signal),
      message: e instanceof Error ? e.message : String(e),
      seconds: (performance.now() - started) / 1000,
    };
  }
}
