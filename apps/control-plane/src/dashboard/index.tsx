import { Hono } from "hono";
import type { AuthEnv } from "../auth";
import type { AppDeps } from "../deps";
import type { Engine } from "../engine";

/** The operator dashboard at `/` (server-rendered Hono JSX). */
export function dashboardRoutes(_deps: AppDeps, _engine: Engine) {
  const app = new Hono<AuthEnv>();
  app.get("/", (c) => c.html(<html lang="en"><body><h1>linewatch</h1><p>See <a href="/docs">/docs</a>.</p></body></html>));
  return app;
}
