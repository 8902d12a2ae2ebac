// createRouterApp(deps): the proxy on Hono, speaking the OpenAI (chat completions, completions,
// embeddings, Responses) and Anthropic (Messages, token counting) APIs (surfaces.ts). Under
// @hono/node-server the proxy routes write straight to Node's response (no Web-stream copies on the
// hot path); elsewhere (app.request in tests) they answer with a standard Response.
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { getRequestListener, type HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { LineEjector, Logger, RetryBudget, Rng, RouterClient } from "@linewatch/router-client";
import { type Context, Hono } from "hono";
import type { Dispatcher } from "undici";
import { clientHeaders, clientHeadersOf } from "./client-headers";
import { type LocalError, localErrorBody } from "./local-errors";
import type { RouterMetrics } from "./metrics";
import type { OutcomeReporter } from "./outcome-reporter";
import { AFFINITY_HEADER, type ProxyDeps, proxyRequest } from "./proxy";
import { nodeSink, webSink } from "./response-sink";
import { dialectOfPath, type ErrorDialect, SURFACES, type Surface } from "./surfaces";

export interface RouterAppDeps {
  tables: Pick<RouterClient, "snapshot" | "routes" | "routesKnown" | "status" | "ready">;
  dispatcher: Dispatcher;
  metrics: RouterMetrics;
  rng: Rng;
  now: () => number;
  logger: Logger;
  config: { upstreamTimeoutMs: number; maxBodyBytes: number; inBandCheck: boolean; cutMinTokens: number };
  budget: RetryBudget;
  ejector: LineEjector;
  /** Live outcomes go here (outcome-reporter.ts); `roleProblem` keeps the router not ready. */
  reporter: Pick<OutcomeReporter, "record" | "holdBack" | "pushSoon" | "roleProblem">;
}

class BodyTooLarge extends Error {}

function readNodeBody(incoming: IncomingMessage, max: number): Promise<Buffer> {
  // Anonymous callbacks on purpose: this runs per request, and a dev runtime that keeps function
  // names (tsx) pays for naming every named closure.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    incoming.on("data", (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > max) {
        over = true;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    incoming.once("end", () => {
      if (!over) resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
    incoming.once("error", reject);
  });
}

const proxyDepsCache = new WeakMap<RouterAppDeps, ProxyDeps>();
function proxyDepsOf(deps: RouterAppDeps): ProxyDeps {
  let p = proxyDepsCache.get(deps);
  if (p === undefined) {
    p = {
      tables: deps.tables,
      dispatcher: deps.dispatcher,
      metrics: deps.metrics,
      rng: deps.rng,
      logger: deps.logger,
      upstreamTimeoutMs: deps.config.upstreamTimeoutMs,
      now: deps.now,
      budget: deps.budget,
      ejector: deps.ejector,
      check: deps.config.inBandCheck ? { cutMinTokens: deps.config.cutMinTokens } : null,
      recordOutcome: (line, outcome) => deps.reporter.record(line.id, outcome),
      recordHeldBack: (line) => deps.reporter.holdBack(line.id),
      onEjected: () => deps.reporter.pushSoon(),
    };
    proxyDepsCache.set(deps, p);
  }
  return p;
}

const tooLarge = (deps: RouterAppDeps, dialect: ErrorDialect) =>
  localErrorBody(dialect, {
    status: 413,
    code: "payload_too_large",
    message: `Request body larger than ${deps.config.maxBodyBytes} bytes.`,
  });
const internal = (dialect: ErrorDialect) =>
  localErrorBody(dialect, { status: 500, code: "internal_error", message: "The router failed to handle the request." });

/** One proxied request on Node's request/response objects. */
async function proxyNode(deps: RouterAppDeps, surface: Surface, incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
  const sink = nodeSink(outgoing);
  let body: Buffer;
  try {
    if (Number(incoming.headers["content-length"] ?? 0) > deps.config.maxBodyBytes) throw new BodyTooLarge();
    body = await readNodeBody(incoming, deps.config.maxBodyBytes);
  } catch (e) {
    if (!(e instanceof BodyTooLarge)) throw e;
    sink.sendLocal(413, { connection: "close" }, tooLarge(deps, surface.dialect));
    return;
  }
  const url = incoming.url ?? "";
  const q = url.indexOf("?");
  await proxyRequest(proxyDepsOf(deps), {
    surface,
    path: q === -1 ? surface.path : surface.path + url.slice(q),
    body,
    affinityHeader: incoming.headers[AFFINITY_HEADER] as string | undefined,
    accept: incoming.headers.accept,
    client: clientHeaders(incoming.headers),
    sink,
  });
}

/**
 * The Node request listener the router serves with: the proxied POST routes go straight to the
 * proxy (the same code the Hono routes run, minus building a Web Request and Context per request,
 * which on this hot path costs about as much as the proxying itself); everything else is the Hono app.
 */
export function createRouterListener(app: Hono<{ Bindings: HttpBindings }>, deps: RouterAppDeps): RequestListener {
  const hono = getRequestListener(app.fetch);
  const surfaces = new Map<string, Surface>(SURFACES.map((s) => [`/v1${s.path}`, s]));
  return (incoming, outgoing) => {
    if (incoming.method === "POST") {
      const url = incoming.url ?? "";
      const q = url.indexOf("?");
      const surface = surfaces.get(q === -1 ? url : url.slice(0, q));
      if (surface !== undefined) {
        proxyNode(deps, surface, incoming, outgoing).catch((e: unknown) => {
          deps.logger.error("router: unhandled error", { path: url, error: e instanceof Error ? e.message : String(e) });
          if (!outgoing.headersSent) nodeSink(outgoing).sendLocal(500, {}, internal(surface.dialect));
          else outgoing.destroy();
        });
        return;
      }
    }
    void hono(incoming, outgoing);
  };
}

const errorJson = (c: Context, dialect: ErrorDialect, e: LocalError) =>
  c.json(localErrorBody(dialect, e), e.status as 400 | 404 | 413 | 500);

/** The routes as models, the OpenAI way (`GET /v1/models`). */
function openAiModels(deps: RouterAppDeps) {
  const data = deps.tables.routes().map((route) => {
    const generatedAt = deps.tables.snapshot(route)?.table.generatedAt;
    const created = generatedAt ? Math.floor(Date.parse(generatedAt) / 1000) : 0;
    return { id: route, object: "model", created: Number.isFinite(created) ? created : 0, owned_by: "linewatch" };
  });
  return { object: "list", data };
}

/** The routes as models, the Anthropic way (a client that sends `anthropic-version`). */
function anthropicModels(deps: RouterAppDeps) {
  const routes = deps.tables.routes();
  const data = routes.map((route) => ({
    type: "model",
    id: route,
    display_name: route,
    created_at: deps.tables.snapshot(route)?.table.generatedAt ?? new Date(0).toISOString(),
  }));
  return { data, has_more: false, first_id: routes[0] ?? null, last_id: routes.at(-1) ?? null };
}

/** `GET /healthz`: up, ready, and each route's table as this router holds it. */
function health(deps: RouterAppDeps) {
  const now = deps.now();
  return {
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
  };
}

export function createRouterApp(deps: RouterAppDeps): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();

  const proxyHandler = (surface: Surface) => async (c: Context<{ Bindings: HttpBindings }>) => {
    const env = c.env as HttpBindings | undefined;
    if (env?.incoming !== undefined && env.outgoing !== undefined) {
      // Served by @hono/node-server: read and answer on Node's objects directly.
      await proxyNode(deps, surface, env.incoming, env.outgoing);
      return RESPONSE_ALREADY_SENT;
    }
    if (Number(c.req.header("content-length") ?? 0) > deps.config.maxBodyBytes) return c.json(tooLarge(deps, surface.dialect), 413);
    const raw = await c.req.arrayBuffer();
    if (raw.byteLength > deps.config.maxBodyBytes) return c.json(tooLarge(deps, surface.dialect), 413);
    const q = c.req.url.indexOf("?");
    const { sink, response } = webSink(c.req.raw.signal);
    await proxyRequest(proxyDepsOf(deps), {
      surface,
      path: q === -1 ? surface.path : surface.path + c.req.url.slice(q),
      body: Buffer.from(raw),
      affinityHeader: c.req.header(AFFINITY_HEADER),
      accept: c.req.header("accept"),
      client: clientHeadersOf(c.req.raw.headers),
      sink,
    });
    return response;
  };

  for (const surface of SURFACES) app.post(`/v1${surface.path}`, proxyHandler(surface));

  app.get("/v1/models", (c) => c.json(c.req.header("anthropic-version") ? anthropicModels(deps) : openAiModels(deps)));

  app.get("/healthz", (c) => c.json(health(deps)));

  // Ready once every route has a table (from the control plane or the cache file), and never with
  // a token the control plane refuses as a router's (issue 16: it would route without credentials).
  app.get("/readyz", (c) => {
    const problem = deps.reporter.roleProblem;
    if (problem !== null) return c.json({ status: "not a router token", message: problem }, 503);
    return deps.tables.ready() ? c.json({ status: "ready" }) : c.json({ status: "waiting for tables" }, 503);
  });

  app.get("/metrics", async (c) => {
    const text = await deps.metrics.registry.metrics();
    return c.text(text, 200, { "content-type": deps.metrics.registry.contentType });
  });

  app.notFound((c) =>
    errorJson(c, dialectOfPath(c.req.path), {
      status: 404,
      code: "unknown_url",
      message: `Unknown request URL: ${c.req.method} ${c.req.path}.`,
    }),
  );
  app.onError((e, c) => {
    deps.logger.error("router: unhandled error", { path: c.req.path, error: e instanceof Error ? e.message : String(e) });
    return c.json(internal(dialectOfPath(c.req.path)), 500);
  });
  return app;
}
