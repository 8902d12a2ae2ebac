// The service layer: every change to lines, routes, samples, tokens and webhooks, and every read the API and the
// dashboard make, in one place each (STYLE 14). HTTP routes and dashboard pages are adapters over these.
import type { TokenStore } from "../auth";
import type { AppDeps } from "../deps";
import type { Engine } from "../engine";
import { EventService } from "./events";
import { LineViews } from "./line-views/index";
import { LineService } from "./lines";
import { OutcomeService } from "./outcomes";
import { ReplayService } from "./replay";
import { RouteService } from "./routes";
import { SampleService } from "./samples";
import { SystemService } from "./system";
import { TableService } from "./tables";
import { TokenService } from "./tokens";
import { WebhookService } from "./webhooks";

export interface Services {
  lines: LineService;
  routes: RouteService;
  samples: SampleService;
  tokens: TokenService;
  events: EventService;
  outcomes: OutcomeService;
  replay: ReplayService;
  tables: TableService;
  system: SystemService;
  webhooks: WebhookService;
  /** The read model of lines (health, pages, the overview). */
  views: LineViews;
}

/** `auth` is the token cache the API authenticates with: the token service keeps it current. */
export function createServices(deps: AppDeps, engine: Engine, auth: TokenStore): Services {
  return {
    lines: new LineService(deps, engine),
    routes: new RouteService(deps, engine),
    samples: new SampleService(deps),
    tokens: new TokenService(deps, auth),
    events: new EventService(deps),
    outcomes: new OutcomeService(deps, engine),
    replay: new ReplayService(deps, engine),
    tables: new TableService(engine),
    system: new SystemService(deps, engine),
    webhooks: new WebhookService(deps, engine),
    views: new LineViews(deps, engine),
  };
}
