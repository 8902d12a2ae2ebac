// The webhook sinks page: each sink's queue, dead letters and last error (docs/alerts.md#webhooks).
import type { Hono, MiddlewareHandler } from "hono";
import type { AuthEnv } from "../auth";
import type { AppDeps } from "../deps";
import type { Services } from "../services/index";
import type { Pages } from "./pages";
import { WebhooksBody } from "./views/webhooks-page";

export function webhooksRoute(app: Hono<AuthEnv>, deps: Pick<AppDeps, "clock">, services: Services, pages: Pages, gzip: MiddlewareHandler) {
  app.get("/webhooks", gzip, async (c) => {
    const viewer = await pages.reader(c);
    if (viewer instanceof Response) return viewer;
    const webhooks = await services.webhooks.list();
    const dead = webhooks.reduce((n, w) => n + w.delivery.deadLetters, 0);
    return pages.page(
      c,
      viewer,
      dead > 0 ? `(${dead}) webhooks · linewatch` : "webhooks · linewatch",
      <WebhooksBody webhooks={webhooks} now={deps.clock.now()} />,
    );
  });
}
