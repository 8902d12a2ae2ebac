// Where an upstream answer goes: straight onto Node's ServerResponse (the served path, no
// Web-stream copies) or into a standard Response (Hono's app.request, e.g. in tests).
import type { ServerResponse } from "node:http";

export type OutgoingHeaders = Record<string, string | string[]>;

export interface ResponseSink {
  /** The client went away (or the response was already ended). */
  readonly closed: boolean;
  /** Called once when the client goes away before the response has finished. */
  onClientGone(fn: () => void): void;
  start(status: number, headers: OutgoingHeaders): void;
  /** false: pause until `onDrain`. */
  write(chunk: Buffer): boolean;
  onDrain(fn: () => void): void;
  end(): void;
  /** The body broke after the status went out: cut the response. */
  abort(error: Error): void;
  /** An answer the router makes itself (an error body in the client's API shape: local-errors.ts). */
  sendLocal(status: number, headers: Record<string, string>, body: object): void;
}

/**
 * Node's response as a sink: one object per request whose methods live on the prototype. An
 * object literal with a getter and closures per request (what this was) costs more than its
 * code: each literal's accessor pair gets its own hidden class in old space, which keeps the
 * whole request (its closures' `res` and everything reachable from it) alive through every
 * minor GC until the next full one — ~2.5 KB promoted per request and 10× longer scavenges.
 */
class NodeSink implements ResponseSink {
  constructor(private readonly res: ServerResponse) {}

  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  onClientGone(fn: () => void): void {
    const res = this.res;
    res.once("close", () => {
      if (!res.writableFinished) fn();
    });
  }

  start(status: number, headers: OutgoingHeaders): void {
    const res = this.res;
    res.writeHead(status, headers);
    // An event stream's status and headers go out now, not with its first event — unless that
    // event came in the same read from the upstream (parsed in this same turn): then they share
    // one write. A microtask runs after the parser's callbacks, without an extra loop turn.
    const type = headers["content-type"];
    if (typeof type === "string" && type.startsWith("text/event-stream")) {
      queueMicrotask(() => {
        if (!res.headersSent && !res.destroyed) res.flushHeaders();
      });
    }
  }

  write(chunk: Buffer): boolean {
    return this.res.write(chunk);
  }

  onDrain(fn: () => void): void {
    this.res.once("drain", fn);
  }

  end(): void {
    this.res.end();
  }

  abort(error: Error): void {
    this.res.destroy(error);
  }

  sendLocal(status: number, headers: Record<string, string>, body: object): void {
    const res = this.res;
    if (res.destroyed || res.headersSent) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  }
}

export function nodeSink(res: ServerResponse): ResponseSink {
  return new NodeSink(res);
}

/** A standard Response as a sink (a class for the same reason as NodeSink). */
class WebSink implements ResponseSink {
  readonly response: Promise<Response>;
  private resolve!: (r: Response) => void;
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  private done = false;
  private readonly drainWaiters: (() => void)[] = [];
  private readonly stream: ReadableStream<Uint8Array>;

  constructor(private readonly signal: AbortSignal | undefined) {
    this.response = new Promise<Response>((r) => {
      this.resolve = r;
    });
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          this.controller = c;
        },
        pull: () => {
          for (const fn of this.drainWaiters.splice(0)) fn();
        },
        cancel: () => {
          this.done = true;
        },
      },
      { highWaterMark: 16 },
    );
  }

  get closed(): boolean {
    return this.done || this.signal?.aborted === true;
  }

  onClientGone(fn: () => void): void {
    this.signal?.addEventListener("abort", fn, { once: true });
  }

  start(status: number, headers: OutgoingHeaders): void {
    const h = new Headers();
    for (const [k, v] of Object.entries(headers)) {
      if (k === "content-length") continue;
      if (Array.isArray(v)) for (const item of v) h.append(k, item);
      else h.set(k, v);
    }
    this.resolve(new Response(status === 204 || status === 304 ? null : this.stream, { status, headers: h }));
  }

  write(chunk: Buffer): boolean {
    if (this.done) return true;
    this.controller?.enqueue(new Uint8Array(chunk));
    return (this.controller?.desiredSize ?? 1) > 0;
  }

  onDrain(fn: () => void): void {
    this.drainWaiters.push(fn);
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.controller?.close();
  }

  abort(error: Error): void {
    if (this.done) return;
    this.done = true;
    this.controller?.error(error);
  }

  sendLocal(status: number, headers: Record<string, string>, body: object): void {
    this.done = true;
    this.resolve(new Response(JSON.stringify(body), { status, headers: { ...headers, "content-type": "application/json" } }));
  }
}

/** A sink that resolves to a standard Response once the status is known. */
export function webSink(signal: AbortSignal | undefined): { sink: ResponseSink; response: Promise<Response> } {
  const sink = new WebSink(signal);
  return { sink, response: sink.response };
}
