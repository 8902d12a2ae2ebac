// The operator dashboard at `/` (server-rendered Hono JSX, charts drawn by uPlot served from here).
// Pages read the services' read model (services/line-views) and make their changes through the same
// services as the API: a form can never do something the API would refuse, or miss a side effect it has.
import { Hono } from "hono";
import { compress } from "hono/compress";
import { type AuthEnv, TokenStore } from "../auth";
import type { AppDeps } from "../deps";
import type { Services } from "../services/index";
import { ASSET_PREFIX, loadAssets } from "./assets";
import { lineRoutes } from "./line-routes";
import { loginRoutes } from "./login-routes";
import { overviewRoutes } from "./overview-routes";
import { Pages } from "./pages";
import { replayRoute } from "./replay-route";
import { DashboardTokens } from "./session";
import { webhooksRoute } from "./webhooks-route";

export function dashboardRoutes(deps: AppDeps, services: Services) {
  const app = new Hono<AuthEnv>();
  // Its own token cache, read afresh on every request (session.ts DashboardTokens).
  const pages = new Pages(deps, new DashboardTokens(new TokenStore(deps)));
  const gzip = compress();

  app.get(`${ASSET_PREFIX}:name`, gzip, (c) => {
    const found = loadAssets().get(c.req.param("name"));
    if (!found) return c.text("not found", 404);
    // The URL carries the content hash: cache for good when it matches, briefly otherwise.
    const immutable = c.req.query("v") === found.hash;
    return c.body(new Uint8Array(found.body), 200, {
      "content-type": found.type,
      "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
      "x-content-type-options": "nosniff",
    });
  });
  overviewRoutes(app, deps, services, pages, gzip);
  replayRoute(app, services, pages, gzip);
  lineRoutes(app, deps, services, pages, gzip);
  webhooksRoute(app, deps, services, pages, gzip);
  loginRoutes(app, pages);
  return app;
}
