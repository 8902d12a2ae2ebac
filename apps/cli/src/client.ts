import { ApiFailure, Unreachable, UsageError } from "./errors";
import type { ErrorEnvelope } from "./types";

export const DEFAULT_URL = "http://127.0.0.1:8787";
const DEFAULT_TIMEOUT_MS = 30_000;

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  timeoutMs?: number;
}

/** The control plane's HTTP API: JSON in, JSON out, the docs/api.md error envelope turned into ApiFailure. */
export class ApiClient {
  readonly baseUrl: string;

  constructor(
    url: string,
    private readonly token: string | undefined,
  ) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UsageError(`--url: not a URL: ${JSON.stringify(url)}`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new UsageError(`--url: must be http(s): ${JSON.stringify(url)}`);
    this.baseUrl = parsed.toString().replace(/\/+$/, "");
  }

  get<T>(path: string, opts: RequestOptions = {}): Promise<T> {
    return this.request<T>("GET", path, opts);
  }
  post<T>(path: string, body: unknown, opts: RequestOptions = {}): Promise<T> {
    return this.request<T>("POST", path, { ...opts, body });
  }
  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>("PATCH", path, { body });
  }
  delete<T = null>(path: string, opts: RequestOptions = {}): Promise<T> {
    return this.request<T>("DELETE", path, opts);
  }

  /**
   * POST and read an NDJSON answer (`Accept: application/x-ndjson`): `onLine` sees each line but the
   * last, which is returned. An error before the stream starts is the usual ApiFailure; an `error`
   * line is turned into one. No overall timeout: the server answers with progress while it works.
   */
  async postStream<T>(path: string, body: unknown, onLine: (line: Record<string, unknown>) => void): Promise<T> {
    const headers: Record<string, string> = { accept: "application/x-ndjson", "content-type": "application/json" };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    } catch (error) {
      throw unreachable(this.baseUrl, error, DEFAULT_TIMEOUT_MS);
    }
    if (!res.ok || !res.body) throw failureFrom("POST", path, res.status, await res.text().catch(() => ""));
    const decoder = new TextDecoder();
    let buffered = "";
    let last: Record<string, unknown> | null = null;
    const take = (line: string) => {
      if (line.trim() === "") return;
      if (last) onLine(last);
      last = JSON.parse(line) as Record<string, unknown>;
    };
    for await (const chunk of res.body) {
      buffered += decoder.decode(chunk as Uint8Array, { stream: true });
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) take(line);
    }
    take(buffered);
    const final = last as Record<string, unknown> | null;
    if (final && "error" in final) throw failureFrom("POST", path, 500, JSON.stringify(final));
    if (!final) throw new ApiFailure(`POST ${path}: the answer ended before the result`, res.status, "bad_response");
    return final as T;
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw unreachable(this.baseUrl, error, timeoutMs);
    }
    const text = await res.text().catch((error: unknown) => {
      throw unreachable(this.baseUrl, error, timeoutMs);
    });
    if (res.ok) {
      if (text === "") return null as T;
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new ApiFailure(
          `${method} ${path}: the answer is not JSON (is ${this.baseUrl} a linewatch control plane?)`,
          res.status,
          "bad_response",
        );
      }
    }
    throw failureFrom(method, path, res.status, text);
  }
}

function failureFrom(method: string, path: string, status: number, text: string): ApiFailure {
  let envelope: ErrorEnvelope | null = null;
  try {
    const parsed = JSON.parse(text) as ErrorEnvelope;
    if (parsed && typeof parsed.error?.message === "string") envelope = parsed;
  } catch {
    // not the API's envelope: say what came back instead
  }
  if (!envelope) return new ApiFailure(`${method} ${path}: HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ""}`, status, "http_error");
  const { code, message, details = [] } = envelope.error;
  let hint = "";
  if (status === 401) hint = " (pass --token or set LINEWATCH_TOKEN)";
  return new ApiFailure(`${message}${hint}`, status, code, details);
}

function unreachable(baseUrl: string, error: unknown, timeoutMs: number): Unreachable {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") {
    return new Unreachable(`the control plane at ${baseUrl} did not answer within ${Math.round(timeoutMs / 1000)} s`);
  }
  const why = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(error);
  return new Unreachable(
    `cannot reach the control plane at ${baseUrl} (${why}); start it with \`linewatch serve\` or pass --url / LINEWATCH_URL`,
  );
}
