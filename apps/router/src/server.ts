// startRouter: the router composed and listening — used by main.ts, the tests and the
// end-to-end suites (start it on port 0 with a control-plane URL).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import {
  type BaseLookup,
  createGuardedLookup,
  createRouterClient,
  DEFAULT_EJECTOR,
  DEFAULT_RETRY_BUDGET,
  guardConnect,
  jsonLineLogger,
  LineEjector,
  type Logger,
  RetryBudget,
  type Rng,
  type RouterClient,
} from "@linewatch/router-client";
import { collectDefaultMetrics, Registry } from "prom-client";
import { Agent, buildConnector } from "undici";
import { createRouterApp, createRouterListener, type RouterAppDeps } from "./app";
import { defaultRouterId, type RouterConfig } from "./config";
import { createMetrics } from "./metrics";
import { OutcomeReporter } from "./outcome-reporter";

/** The control plane refused this router's token as a router's (403): it must not route. */
export class RouterTokenError extends Error {
  override name = "RouterTokenError";
}

export interface StartRouterOptions extends Partial<Omit<RouterConfig, "controlPlaneUrl">> {
  controlPlaneUrl: string;
  logger?: Logger;
  rng?: Rng;
  now?: () => number;
  /** Process metrics (CPU, heap, event loop) on /metrics; default true. */
  processMetrics?: boolean;
  /** Serve the proxied routes straight from Node (default) or through Hono like every other route. */
  fastPath?: boolean;
  /** The resolver under the upstream guard; unset: the system's (tests pass one they control). */
  dnsLookup?: BaseLookup;
  /** Passed to the router-client (e.g. backoff, startTimeoutMs, discoveryIntervalMs). */
  clientOptions?: Partial<Parameters<typeof createRouterClient>[0]>;
}

export interface RunningRouter {
  url: string;
  port: number;
  client: RouterClient;
  app: ReturnType<typeof createRouterApp>;
  reporter: OutcomeReporter;
  budget: RetryBudget;
  close(): Promise<void>;
}

/** Upstream connections: keep-alive pools behind the same upstream guard as the control plane's prober (base URLs come from its tables). */
function upstreamDispatcher(options: StartRouterOptions): Agent {
  const allowed = options.allowUpstreamHosts ?? [];
  const connector = buildConnector({
    timeout: options.connectTimeoutMs ?? 5_000,
    lookup: createGuardedLookup(allowed, options.dnsLookup),
  });
  return new Agent({ connect: guardConnect(connector, allowed), keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
}

interface Parts {
  logger: Logger;
  rng: Rng;
  now: () => number;
  client: RouterClient;
  dispatcher: Agent;
  reporter: OutcomeReporter;
  budget: RetryBudget;
}

function routerParts(options: StartRouterOptions): Parts {
  const logger = options.logger ?? jsonLineLogger;
  const rng = options.rng ?? Math.random;
  const now = options.now ?? Date.now;
  const client = createRouterClient({
    controlPlaneUrl: options.controlPlaneUrl,
    token: options.token ?? undefined,
    routes: options.routes ?? [],
    cacheFile: options.cacheFile === undefined ? "./.linewatch/router-tables.json" : options.cacheFile,
    waitSec: options.waitSec ?? 30,
    rng,
    now,
    logger,
    ...options.clientOptions,
  });
  const reporter = new OutcomeReporter({
    controlPlaneUrl: options.controlPlaneUrl,
    token: options.token ?? null,
    routerId: options.routerId ?? defaultRouterId(),
    intervalMs: options.reportIntervalMs ?? 5_000,
    maxBacklog: options.reportBacklog ?? 120,
    now,
    logger,
    ...(options.clientOptions?.fetch ? { fetch: options.clientOptions.fetch } : {}),
  });
  const budget = new RetryBudget({
    ...DEFAULT_RETRY_BUDGET,
    ratio: (options.retryBudgetPct ?? DEFAULT_RETRY_BUDGET.ratio * 100) / 100,
    minRetries: options.retryBudgetMin ?? DEFAULT_RETRY_BUDGET.minRetries,
  });
  return { logger, rng, now, client, dispatcher: upstreamDispatcher(options), reporter, budget };
}

function appDeps(options: StartRouterOptions, parts: Parts): RouterAppDeps {
  const registry = new Registry();
  if (options.processMetrics ?? true) {
    collectDefaultMetrics({ register: registry, prefix: "linewatch_router_" });
    // Gauges named *_total, which promtool rejects (as the control plane's metrics.ts removes them).
    for (const n of ["handles", "requests", "resources"]) registry.removeSingleMetric(`linewatch_router_nodejs_active_${n}_total`);
  }
  const { client, now } = parts;
  return {
    tables: client,
    dispatcher: parts.dispatcher,
    metrics: createMetrics(registry, { tableStatus: () => client.status(), now }),
    rng: parts.rng,
    now,
    logger: parts.logger,
    config: {
      upstreamTimeoutMs: options.upstreamTimeoutMs ?? 60_000,
      maxBodyBytes: options.maxBodyBytes ?? 8 * 1024 * 1024,
      inBandCheck: options.inBandCheck ?? true,
      cutMinTokens: options.cutMinTokens ?? 16,
    },
    budget: parts.budget,
    ejector: new LineEjector({ ...DEFAULT_EJECTOR, failures: options.ejectAfterFailures ?? DEFAULT_EJECTOR.failures }),
    reporter: parts.reporter,
  };
}

/** Before any traffic: a token the control plane refuses for reports is not a router token. */
async function checkToken(options: StartRouterOptions, parts: Parts): Promise<void> {
  const { reporter, logger } = parts;
  const role = await reporter.checkRole();
  if (role.ok) return;
  if (role.kind === "forbidden") {
    await parts.dispatcher.close();
    throw new RouterTokenError(
      `LINEWATCH_TOKEN is not a router token (${role.message}); its tables would carry no credentials. Create one with: npx linewatch tokens create <name> --role router`,
    );
  }
  if (role.kind === "unauthorized") {
    logger.error(
      "router: the control plane answers 401 to this router's token: table pulls and outcome reports will fail until it is fixed",
      {
        token: options.token ? "set (unknown or revoked)" : "not set",
        message: role.message,
      },
    );
    return;
  }
  logger.warn("router: could not check the token's role (control plane unreachable); each outcome push checks it again", {
    error: role.message,
  });
}

async function listen(server: Server, options: StartRouterOptions, parts: Parts): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 8788, options.host ?? "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (e) {
    await parts.reporter.close();
    await parts.client.close();
    await parts.dispatcher.close();
    throw e;
  }
}

export async function startRouter(options: StartRouterOptions): Promise<RunningRouter> {
  const parts = routerParts(options);
  const deps = appDeps(options, parts);
  const app = createRouterApp(deps);
  await checkToken(options, parts);
  const { client, reporter, budget, dispatcher } = parts;
  await client.start();
  reporter.start();
  const server: Server = createServer((options.fastPath ?? true) ? createRouterListener(app, deps) : getRequestListener(app.fetch));
  // Longer than the usual 60 s idle timeout of load balancers in front, so they close first.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await listen(server, options, parts);
  const port = (server.address() as AddressInfo).port;
  const host = options.host && options.host !== "0.0.0.0" && options.host !== "::" ? options.host : "127.0.0.1";
  let closed: Promise<void> | null = null;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    client,
    app,
    reporter,
    budget,
    close() {
      closed ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await reporter.close();
        await client.close();
        await dispatcher.close();
      })();
      return closed;
    },
  };
}
