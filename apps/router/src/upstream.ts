// One attempt at one line, on undici's dispatch API (keep-alive pools per origin; not global
// fetch, which costs several times the CPU, and no Readable/pipeline per response): the answer
// is written to the client's sink chunk by chunk with backpressure, unless the proxy may still
// retry it, in which case it is read and dropped.
import type { IncomingHttpHeaders } from "node:http";
import {
  type AnswerCheckOptions,
  type AnswerVerdict,
  checkJsonAnswer,
  type LiveOutcome,
  outcomeOfStatus,
  type SseScan,
  streamCheckFor,
  type TableLine,
} from "@linewatch/router-client";
import type { Dispatcher } from "undici";
import type { AttemptReport } from "./attempt-report";
import type { ClientHeaders } from "./client-headers";
import type { RouterMetrics } from "./metrics";
import type { OutgoingHeaders, ResponseSink } from "./response-sink";

export type AttemptError = "unreachable" | "timeout" | "aborted";

export type AttemptResult =
  /** The answer is going to the client (its status and headers are out). */
  | { type: "sent"; status: number; seconds: number }
  /**
   * Not sent because another line may take the request: a 5xx or 429, or (in-band check) a
   * non-streamed 2xx that was empty or an error in disguise. The retry is taken from the budget.
   */
  | { type: "refused"; status: number; seconds: number; outcome: LiveOutcome }
  /** Nothing came back that could be sent. */
  | { type: "failed"; error: AttemptError; message: string; seconds: number };

/** The Anthropic API version sent when the client named none (the one every Anthropic upstream knows). */
export const DEFAULT_ANTHROPIC_VERSION = "2023-06-01";

/** Where a line's requests go, worked out once per line object (lines are immutable per table version). */
interface LineTarget {
  origin: string;
  /** The base URL's path without a trailing slash, e.g. `/v1`. */
  pathPrefix: string;
  anthropic: boolean;
  /** The line's own headers as flat name/value pairs, lower-cased names: they win over the client's and the credential. */
  lineHeaders: string[];
  lineHeaderNames: ReadonlySet<string>;
  /** OpenAI lines: `authorization: Bearer <key>` when the line sets no such header itself; Anthropic lines choose per request. */
  credential: string[];
}

const targets = new WeakMap<TableLine, LineTarget>();

function targetOf(line: TableLine): LineTarget {
  let t = targets.get(line);
  if (t === undefined) {
    const url = new URL(line.baseUrl);
    const lineHeaders: string[] = [];
    for (const [k, v] of Object.entries(line.headers ?? {})) {
      const name = k.toLowerCase();
      if (name !== "content-length" && name !== "host") lineHeaders.push(name, v);
    }
    const names = new Set(lineHeaders.filter((_, i) => i % 2 === 0));
    const anthropic = line.protocol === "anthropic-messages";
    const credential = !anthropic && line.apiKey && !names.has("authorization") ? ["authorization", `Bearer ${line.apiKey}`] : [];
    t = { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, ""), anthropic, lineHeaders, lineHeaderNames: names, credential };
    targets.set(line, t);
  }
  return t;
}

/**
 * An Anthropic line's key goes in the header the client used for its own (`x-api-key`, or the bearer
 * token the 1.x SDKs send), `x-api-key` when it sent none; and `anthropic-version` is the client's,
 * unchanged, or DEFAULT_ANTHROPIC_VERSION.
 */
function anthropicHeaders(line: TableLine, t: LineTarget, client: ClientHeaders): string[] {
  const out: string[] = [];
  const name = client.credential ?? "x-api-key";
  if (line.apiKey && !t.lineHeaderNames.has(name)) out.push(name, name === "authorization" ? `Bearer ${line.apiKey}` : line.apiKey);
  if (!client.anthropicVersion && !t.lineHeaderNames.has("anthropic-version")) out.push("anthropic-version", DEFAULT_ANTHROPIC_VERSION);
  return out;
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
/**
 * Largest non-streamed answer held back for the in-band check while a retry is possible; a larger
 * one goes out as it is (checked on the way, but no longer retryable). Streams are never held.
 */
const HOLD_LIMIT = 1024 * 1024;

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
  /** What of the client's headers goes on (client-headers.ts). */
  client: ClientHeaders;
  timeoutMs: number;
  sink: ResponseSink;
  /** Send 5xx and 429 too (the last attempt); otherwise they come back as `refused` if `owner.tryRetry` allows. */
  sendAny: boolean;
  /** In-band answer check; null: outcomes by status only. */
  check: AnswerCheckOptions | null;
  /** The proxy's side of this attempt: the retry budget and where the outcome goes. */
  owner: AttemptOwner;
  /** Added to the response headers as name, value, name, value…: line name, table version, retry reason. */
  tags: string[];
  /** Counts a body that broke after the status went out (upstream died, or the client left). */
  metrics: Pick<RouterMetrics, "interrupted">;
  route: string;
}

/**
 * What an attempt asks of the proxy that started it. An object with methods rather than closures
 * in the input: the router runs under tsx, which names every closure assigned to a property
 * (a defineProperty per closure per request).
 */
export interface AttemptOwner {
  /** Takes a retry from the budget; false: the answer goes to the client as it came. */
  tryRetry(): boolean;
  /** Called once when the attempt has ended (not when the client left). */
  onOutcome(o: AttemptReport): void;
}

const isEventStream = (headers: IncomingHttpHeaders) => {
  const t = headers["content-type"];
  return typeof t === "string" && t.startsWith("text/event-stream");
};
const isIdentity = (headers: IncomingHttpHeaders) => {
  const e = headers["content-encoding"];
  return e === undefined || e === "identity";
};

class AttemptHandler implements Dispatcher.DispatchHandler, Attempt {
  private controller: Dispatcher.DispatchController | null = null;
  private mode: "waiting" | "holding" | "sending" | "discarding" | "done" = "waiting";
  private discarded = 0;
  private readonly started = performance.now();
  private ttfbMs: number | null = null;
  private status = 0;
  private out: OutgoingHeaders = {};
  /** Non-streamed 2xx body chunks, kept for the check (held back in `holding`). */
  private body: Buffer[] | null = null;
  private bodySize = 0;
  private stream: SseScan | null = null;
  private reported = false;

  readonly result: Promise<AttemptResult>;
  private settle!: (r: AttemptResult) => void;

  constructor(private readonly input: AttemptInput) {
    this.result = new Promise<AttemptResult>((resolve) => {
      this.settle = resolve;
    });
  }

  private seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  private report(outcome: LiveOutcome, tokens?: AnswerVerdict): void {
    if (this.reported) return;
    this.reported = true;
    this.input.owner.onOutcome({
      outcome,
      latencyMs: performance.now() - this.started,
      ttfbMs: this.ttfbMs,
      promptTokens: tokens?.promptTokens ?? 0,
      completionTokens: tokens?.completionTokens ?? 0,
    });
  }

  /** The client went away: stop the upstream too. */
  cancel(): void {
    if (this.mode === "done" || this.mode === "discarding") return;
    this.reported = true; // the client's doing, not the line's: not an outcome
    this.controller?.abort(new ClientGoneError("client closed the request"));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.input.sink.closed) controller.abort(new ClientGoneError("client closed the request"));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    this.ttfbMs = performance.now() - this.started;
    this.status = statusCode;
    const input = this.input;
    if (!input.sendAny && (statusCode >= 500 || statusCode === 429) && input.owner.tryRetry()) {
      this.mode = "discarding";
      const outcome = outcomeOfStatus(statusCode);
      this.report(outcome);
      this.settle({ type: "refused", status: statusCode, seconds: this.seconds(), outcome });
      return;
    }
    const out: OutgoingHeaders = {};
    for (const k in headers) {
      const v = headers[k];
      if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
    }
    const tags = input.tags;
    for (let i = 0; i + 1 < tags.length; i += 2) out[tags[i] as string] = tags[i + 1] as string;
    this.out = out;
    if (input.check !== null && statusCode < 300) {
      if (isEventStream(headers)) this.stream = streamCheckFor(input.check);
      else if (isIdentity(headers)) {
        this.body = [];
        if (!input.sendAny) {
          // A bad 200 may still go to another line: hold the (small, non-streamed) answer until it is checked.
          this.mode = "holding";
          return;
        }
      }
    }
    this.mode = "sending";
    const sink = input.sink;
    if (sink.closed) {
      controller.abort(new ClientGoneError("client closed the request"));
      return;
    }
    sink.start(statusCode, out);
    this.settle({ type: "sent", status: statusCode, seconds: this.seconds() });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.mode === "sending") {
      if (this.stream !== null) this.stream.push(chunk);
      else if (this.body !== null) this.keep(chunk);
      if (!this.input.sink.write(chunk)) {
        controller.pause();
        this.input.sink.onDrain(() => controller.resume());
      }
    } else if (this.mode === "holding") {
      this.keep(chunk);
      if (this.body === null) {
        // Too large to hold: it goes out as it is, unchecked, and can no longer be retried.
        const held = this.held;
        this.held = [];
        this.mode = "sending";
        this.input.sink.start(this.status, this.out);
        this.settle({ type: "sent", status: this.status, seconds: this.seconds() });
        for (const c of held) this.input.sink.write(c);
        if (!this.input.sink.write(chunk)) {
          controller.pause();
          this.input.sink.onDrain(() => controller.resume());
        }
      }
    } else if (this.mode === "discarding") {
      this.discarded += chunk.length;
      if (this.discarded > DISCARD_LIMIT) {
        this.mode = "done";
        controller.abort(new ClientGoneError("refused answer too large to drain"));
      }
    }
  }

  /** Chunks of a held answer that go out if it turns out too large to check. */
  private held: Buffer[] = [];

  private keep(chunk: Buffer): void {
    if (this.body === null) return;
    this.bodySize += chunk.length;
    if (this.bodySize > HOLD_LIMIT) {
      this.held = this.body;
      this.body = null;
      return;
    }
    this.body.push(chunk);
  }

  onResponseEnd(): void {
    const mode = this.mode;
    this.mode = "done";
    if (mode === "holding") {
      const body = Buffer.concat(this.body ?? [], this.bodySize);
      const verdict = checkJsonAnswer(body, this.input.check as AnswerCheckOptions);
      if ((verdict.outcome === "empty" || verdict.outcome === "masked_error") && this.input.owner.tryRetry()) {
        this.report(verdict.outcome, verdict);
        this.settle({ type: "refused", status: this.status, seconds: this.seconds(), outcome: verdict.outcome });
        return;
      }
      const sink = this.input.sink;
      if (!sink.closed) {
        sink.start(this.status, this.out);
        sink.write(body);
        sink.end();
      }
      this.report(verdict.outcome, verdict);
      this.settle({ type: "sent", status: this.status, seconds: this.seconds() });
      return;
    }
    if (mode !== "sending") return;
    this.input.sink.end();
    if (this.stream !== null) {
      const v = this.stream.end(true);
      this.report(v.outcome, v);
    } else if (this.body !== null) {
      const v = checkJsonAnswer(Buffer.concat(this.body, this.bodySize), this.input.check as AnswerCheckOptions);
      this.report(v.outcome, v);
    } else {
      this.report(outcomeOfStatus(this.status));
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const mode = this.mode;
    this.mode = "done";
    if (mode === "waiting" || mode === "holding") {
      const kind = classifyError(error);
      if (kind !== "aborted") this.report(kind === "timeout" ? "timeout" : "connect");
      this.settle({ type: "failed", error: kind, message: error.message, seconds: this.seconds() });
    } else if (mode === "sending") {
      // Bytes went to the client already: nothing to retry; cut the response so it can tell.
      this.input.metrics.interrupted(this.input.route, this.input.line.name);
      const kind = classifyError(error);
      if (kind !== "aborted") this.report(kind === "timeout" ? "timeout" : "cut", this.stream?.end(false));
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
  const handler = new AttemptHandler(input);
  const headers = ["content-type", "application/json", "accept", input.accept, "content-length", String(Buffer.byteLength(input.body))];
  const forward = input.client.forward;
  for (let i = 0; i + 1 < forward.length; i += 2) {
    if (!t.lineHeaderNames.has(forward[i] as string)) headers.push(forward[i] as string, forward[i + 1] as string);
  }
  if (t.anthropic) headers.push(...anthropicHeaders(input.line, t, input.client));
  else if (t.credential.length > 0) headers.push(...t.credential);
  if (t.lineHeaders.length > 0) headers.push(...t.lineHeaders);
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
  return handler;
}
