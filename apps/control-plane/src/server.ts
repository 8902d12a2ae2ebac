import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { TokenStore } from "./auth";
import { type App, type Services, createApp } from "./app";
import type { AppDeps } from "./deps";
import { loadShippedSamples } from "./shipped-samples";

export interface ControlPlane {
  url: string;
  app: App;
  services: Services;
  close(): Promise<void>;
}

/** Compose the running control plane on given deps: used by main.ts and by tests (port 0). */
export async function startControlPlane(deps: AppDeps): Promise<ControlPlane> {
  const tokens = new TokenStore(deps);
  await tokens.bootstrap();
  if (deps.config.shippedSamples) {
    const names = await loadShippedSamples(deps, deps.config.probesDir);
    deps.logger.info("shipped samples loaded", { samples: names });
  }
  const services: Services = {
    tokens,
    linesChanged: async () => {},
    routeChanged: async () => {},
    warnings: (_route, members) => {
      const usable = members.filter((m) => m.adminState !== "disabled");
      return usable.length > 0 && usable.every((m) => m.tier === "free")
        ? ["every line of this route is free: a free line must never be the only exit by design"]
        : [];
    },
  };
  const app = createApp(deps, services);
  const server = serve({ fetch: app.fetch, port: deps.config.port, hostname: deps.config.host });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = deps.config.host.includes(":") ? `[${deps.config.host}]` : deps.config.host;
  return {
    url: `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`,
    app,
    services,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}
