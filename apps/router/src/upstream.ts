// One attempt at one line, on undici's dispatch API (keep-alive pools per origin; not global
// fetch, which costs several times the CPU, and no Readable/pipeline per response): the answer
// is written to the client's sink chunk by chunk with backpressure, unless the proxy may still
// retry it, in which case it is read and dropped.
import type { IncomingHttpHeaders } from "node:http";
import type { TableLine } from "@linewatch/router-client";
import type { Dispatcher } from "undici";
import type { RouterMetrics } from "./metrics";
import type { OutgoingHeaders, ResponseSink } from "./response-sink";

export type AttemptError = "unreachable" | "timeout" | "aborted";

export type AttemptResult =
  /** The answer is going to the client (its status and headers are out). */
  | { type: "sent"; status: number; seconds: number }
  /** A 5xx or 429 that was not sent because another line may take the request. */
  | { type: "refused"; status: number; seconds: number }
  /** Nothing came back that could be sent. */
  | { type: "failed"; error: AttemptError; message: string; seconds: number };

/** Where a line's requests go, worked out once per line object (lines are immutable per table version). */
interface LineTarget {
  origin: string;
  /** The base URL's path without a trailing slash, e.g. `/v1`. */
  pathPrefix: string;
  /** Credential and line headers as flat name/value pairs, lower-cased names. */
  headerPairs: string[];
}

const targets = new WeakMap<TableLine, LineTarget>();

function targetOf(line: TableLine): LineTarget {
  let t = targets.get(line);
  if (t === undefined) {
    const url = new URL(line.baseUrl);
    const headers: Record<string, string> = {};
    if (line.apiKey) headers.authorization = `Bearer ${line.apiKey}`;
    for (const [k, v] of Object.entries(line.headers ?? {})) {
      const name = k.toLowerCase();
      if (name !== "content-length" && name !== "host") headers[name] = v;
    }
    t = { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, ""), headerPairs: Object.entries(headers).flat() };
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

export function classifyError(e: unknown): AttemptError {
  const code = (e as { code?: string }).code;
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") return "timeout";
  if (code === "UND_ERR_ABORTED" || code === "UND_ERR_ABORT" || (e as Error).name === "AbortError") return "aborted";
  if (code !== undefined && UNREACHABLE.has(code)) return "unreachable";
  const cause = (e as { cause?: unknown }).cause;
  if (cause !== undefined && cause !== e) return classifyError(cause);
  // Anything else on the way to the upstream (TLS, a malformed answer) is the line's fault too.
  return "unreachable";
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** Largest refused (retried) answer read to keep its connection; beyond it the connection is dropped. */
const DISCARD_LIMIT = 65_536;

class ClientGoneError extends Error {
  override name = "AbortError";
  readonly code = "UND_ERR_ABORTED";
}

export interface AttemptInput {
  dispatcher: Dispatcher;
  line: TableLine;
  /** Path after `/v1`, with the query string: `/chat/completions`. */
  path: string;
  body: string;
  accept: string;
  timeoutMs: number;
  sink: ResponseSink;
  /** Send 5xx and 429 too (the last attempt); otherwise they come back as `refused`. */
  sendAny: boolean;
  /** Added to the response headers: line name and table version. */
  tags: [string, string, string, string];
  /** Counts a body that broke after the status went out (upstream died, or the client left). */
  metrics: Pick<RouterMetrics, "interrupted">;
  route: string;
}

class AttemptHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private mode: "waiting" | "sending" | "discarding" | "done" = "waiting";
  private discarded = 0;
  private readonly started = performance.now();

  constructor(
    private readonly input: AttemptInput,
    private readonly settle: (r: AttemptResult) => void,
  ) {}

  private seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  /** The client went away: stop the upstream too. */
  clientGone(): void {
    if (this.mode === "done" || this.mode === "discarding") return;
    this.controller?.abort(new ClientGoneError("client closed the request"));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.input.sink.closed) controller.abort(new ClientGoneError("client closed the request"));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    if (!this.input.sendAny && (statusCode >= 500 || statusCode === 429)) {
      this.mode = "discarding";
      this.settle({ type: "refused", status: statusCode, seconds: this.seconds() });
      return;
    }
    const out: OutgoingHeaders = {};
    for (const k in headers) {
      const v = headers[k];
      if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
    }
    const tags = this.input.tags;
    out[tags[0]] = tags[1];
    out[tags[2]] = tags[3];
    this.mode = "sending";
    const sink = this.input.sink;
    if (sink.closed) {
      controller.abort(new ClientGoneError("client closed the request"));
      return;
    }
    sink.start(statusCode, out);
    this.settle({ type: "sent", status: statusCode, seconds: this.seconds() });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.mode === "sending") {
      if (!this.input.sink.write(chunk)) {
        controller.pause();
        this.input.sink.onDrain(() => controller.resume());
      }
    } else if (this.mode === "discarding") {
      this.discarded += chunk.length;
      if (this.discarded > DISCARD_LIMIT) {
        this.mode = "done";
        controller.abort(new ClientGoneError("refused answer too large to drain"));
      }
    }
  }

  onResponseEnd(): void {
    if (this.mode === "sending") this.input.sink.end();
    this.mode = "done";
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const mode = this.mode;
    this.mode = "done";
    if (mode === "waiting") {
      this.settle({ type: "failed", error: classifyError(error), message: error.message, seconds: this.seconds() });
    } else if (mode === "sending") {
      // Bytes went to the client already: nothing to retry; cut the response so it can tell.
      this.input.metrics.interrupted(this.input.route, this.input.line.name);
      this.input.sink.abort(error);
    }
  }
}

export interface Attempt {
  /** Settles once the answer is being sent, was refused, or failed. */
  result: Promise<AttemptResult>;
  /** The client went away: abort the upstream request. */
  cancel(): void;
}

export function attemptLine(input: AttemptInput): Attempt {
  const t = targetOf(input.line);
  let handler!: AttemptHandler;
  const result = new Promise<AttemptResult>((resolve) => {
    handler = new AttemptHandler(input, resolve);
  });
  const headers = [
    "content-type",
    "application/json",
    "accept",
    input.accept,
    "content-length",
    String(Buffer.byteLength(input.body)),
    ...t.headerPairs,
  ];
  input.dispatcher.dispatch(
    {
      origin: t.origin,
      path: t.pathPrefix + input.path,
      method: "POST",
      headers,
      body: input.body,
      headersTimeout: input.timeoutMs,
      bodyTimeout: input.timeoutMs,
    },
    handler,
  );
  return { result, cancel: () => handler.clientGone() };
}
