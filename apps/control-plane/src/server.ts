import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { type App, createApp } from "./app";
import { TokenStore } from "./auth";
import type { AppDeps } from "./deps";
import { Engine } from "./engine";
import { tablesFirst } from "./routes/tables/listener";
import { startScheduler } from "./scheduler";
import { createServices, type Services } from "./services/index";
import { loadShippedSamples } from "./shipped-samples";

export interface ControlPlane {
  url: string;
  app: App;
  services: Services;
  engine: Engine;
  close(): Promise<void>;
}

/**
 * Compose the running control plane on given deps and serve it: the engine, the services over it, the
 * HTTP app over those, the scheduler. startControlPlane (start.ts) calls this; tests call it on port 0.
 */
export async function serveControlPlane(deps: AppDeps, opts: { rng?: () => number } = {}): Promise<ControlPlane> {
  const auth = new TokenStore(deps);
  await auth.bootstrap();
  if (deps.config.shippedSamples) {
    const names = await loadShippedSamples(deps, deps.config.probesDir, { fingerprints: deps.config.shippedFingerprints });
    deps.logger.info("shipped samples loaded", { samples: names });
  }
  const engine = new Engine(deps, opts.rng);
  await engine.start();
  const scheduler = deps.config.scheduler ? startScheduler(engine) : null;
  const services = createServices(deps, engine, auth);
  const app = createApp(deps, services, auth);
  // Table reads go to their prepared answers before Hono (routes/tables/listener.ts); the rest is the Hono app.
  const server = createServer(
    tablesFirst(getRequestListener(app.fetch, { hostname: deps.config.host }), { tables: services.tables, tokens: auth }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
    // Routers reconnect all at once after a restart: a longer accept queue than Node's 511 keeps their
    // connections from being dropped and retried a second later (the kernel caps it at somaxconn).
    server.listen({ port: deps.config.port, host: deps.config.host, backlog: 4096 });
  });
  const { port } = server.address() as AddressInfo;
  const host = deps.config.host.includes(":") ? `[${deps.config.host}]` : deps.config.host;
  return {
    url: `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`,
    app,
    services,
    engine,
    close: async () => {
      await scheduler?.stop();
      await engine.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
