// createRouterApp(deps): the OpenAI-compatible proxy on Hono. Under @hono/node-server the
// proxy routes write straight to Node's response (no Web-stream copies on the hot path);
// elsewhere (app.request in tests) they answer with a standard Response.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable, pipeline } from "node:stream";
import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { type Context, Hono } from "hono";
import type { Dispatcher } from "undici";
import type { Logger, RouterClient, Rng } from "@linewatch/router-client";
import type { RouterMetrics } from "./metrics";
import { openAIError } from "./openai-errors";
import { AFFINITY_HEADER, type ProxyResult, proxyRequest } from "./proxy";

export interface RouterAppDeps {
  tables: Pick<RouterClient, "snapshot" | "routes" | "status" | "ready">;
  dispatcher: Dispatcher;
  metrics: RouterMetrics;
  rng: Rng;
  now: () => number;
  logger: Logger;
  config: { upstreamTimeoutMs: number; maxBodyBytes: number };
}

const PROXIED = ["/chat/completions", "/completions", "/embeddings"] as const;

class BodyTooLarge extends Error {}

function readNodeBody(incoming: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    incoming.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        incoming.removeAllListeners("data");
        incoming.resume();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    incoming.on("end", () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
    incoming.on("error", reject);
  });
}

function writeNode(outgoing: ServerResponse, result: ProxyResult, metrics: RouterMetrics): void {
  if (result.kind === "local") {
    if (outgoing.destroyed) return;
    const text = JSON.stringify(result.body);
    outgoing.writeHead(result.status, {
      ...result.headers,
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
    });
    outgoing.end(text);
    return;
  }
  outgoing.writeHead(result.status, result.headers);
  // Send the status line and headers now, so a streaming client sees them before the first event.
  const type = result.headers["content-type"];
  if (typeof type === "string" && type.startsWith("text/event-stream")) outgoing.flushHeaders();
  pipeline(result.body, outgoing, (err) => {
    if (err) metrics.interrupted(result.route, result.line);
  });
}

function toWebResponse(result: ProxyResult, metrics: RouterMetrics): Response {
  if (result.kind === "local") {
    return new Response(JSON.stringify(result.body), {
      status: result.status,
      headers: { ...result.headers, "content-type": "application/json" },
    });
  }
  const headers = new Headers();
  for (const [k, v] of Object.entries(result.headers)) {
    if (k === "content-length") continue;
    if (Array.isArray(v)) for (const item of v) headers.append(k, item);
    else headers.set(k, v);
  }
  result.body.once("error", () => metrics.interrupted(result.route, result.line));
  const body = Readable.toWeb(result.body) as unknown as ReadableStream<Uint8Array>;
  return new Response(body, { status: result.status, headers });
}

export function createRouterApp(deps: RouterAppDeps): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const proxyDeps = {
    tables: deps.tables,
    dispatcher: deps.dispatcher,
    metrics: deps.metrics,
    rng: deps.rng,
    logger: deps.logger,
    upstreamTimeoutMs: deps.config.upstreamTimeoutMs,
  };
  const tooLarge = () =>
    openAIError(`Request body larger than ${deps.config.maxBodyBytes} bytes.`, "invalid_request_error", "payload_too_large");

  const proxyHandler = (path: string) => async (c: Context<{ Bindings: HttpBindings }>) => {
    const incoming = (c.env as HttpBindings | undefined)?.incoming;
    const outgoing = (c.env as HttpBindings | undefined)?.outgoing;
    const declared = Number(c.req.header("content-length") ?? 0);
    if (declared > deps.config.maxBodyBytes) return c.json(tooLarge(), 413);
    const search = c.req.url.indexOf("?");
    const fullPath = search === -1 ? path : path + c.req.url.slice(search);

    if (incoming !== undefined && outgoing !== undefined) {
      let body: Buffer;
      try {
        body = await readNodeBody(incoming, deps.config.maxBodyBytes);
      } catch (e) {
        if (e instanceof BodyTooLarge) return c.json(tooLarge(), 413, { connection: "close" });
        throw e;
      }
      // Client gone before the upstream answered: stop the upstream request too.
      const abort = new AbortController();
      const onClose = () => {
        if (!outgoing.writableFinished) abort.abort();
      };
      outgoing.once("close", onClose);
      const result = await proxyRequest(proxyDeps, {
        path: fullPath,
        body,
        affinityHeader: incoming.headers[AFFINITY_HEADER] as string | undefined,
        accept: incoming.headers.accept,
        signal: abort.signal,
      });
      writeNode(outgoing, result, deps.metrics);
      return RESPONSE_ALREADY_SENT;
    }

    const raw = await c.req.arrayBuffer();
    if (raw.byteLength > deps.config.maxBodyBytes) return c.json(tooLarge(), 413);
    const result = await proxyRequest(proxyDeps, {
      path: fullPath,
      body: Buffer.from(raw),
      affinityHeader: c.req.header(AFFINITY_HEADER),
      accept: c.req.header("accept"),
      signal: c.req.raw.signal,
    });
    return toWebResponse(result, deps.metrics);
  };

  for (const path of PROXIED) app.post(`/v1${path}`, proxyHandler(path));

  app.get("/v1/models", (c) => {
    const data = deps.tables.routes().map((route) => {
      const generatedAt = deps.tables.snapshot(route)?.table.generatedAt;
      const created = generatedAt ? Math.floor(Date.parse(generatedAt) / 1000) : 0;
      return { id: route, object: "model", created: Number.isFinite(created) ? created : 0, owned_by: "linewatch" };
    });
    return c.json({ object: "list", data });
  });

  app.get("/healthz", (c) => {
    const now = deps.now();
    return c.json({
      status: "ok",
      ready: deps.tables.ready(),
      routes: deps.tables.status().map((s) => ({
        route: s.route,
        version: s.version,
        mode: s.mode,
        lines: s.lines,
        source: s.source,
        ageSec: s.lastPullAt === null ? null : Math.round((now - s.lastPullAt) / 1000),
        lastError: s.lastError,
      })),
    });
  });

  // Ready once every route has a table (from the control plane or the cache file).
  app.get("/readyz", (c) =>
    deps.tables.ready() ? c.json({ status: "ready" }) : c.json({ status: "waiting for tables" }, 503),
  );

  app.get("/metrics", async (c) => {
    const text = await deps.metrics.registry.metrics();
    return c.text(text, 200, { "content-type": deps.metrics.registry.contentType });
  });

  app.notFound((c) =>
    c.json(openAIError(`Unknown request URL: ${c.req.method} ${c.req.path}.`, "invalid_request_error", "unknown_url"), 404),
  );
  app.onError((e, c) => {
    deps.logger.error("router: unhandled error", { path: c.req.path, error: e instanceof Error ? e.message : String(e) });
    return c.json(openAIError("The router failed to handle the request.", "server_error", "internal_error"), 500);
  });
  return app;
}
