// The request policy of docs/router.md and docs/live-evidence.md: the request's `model` names the route; pick one of the
// route's lines that speak the request's protocol by weight (or affinity key); on connect error,
// timeout, 5xx or 429 — or a non-streamed 2xx that the in-band check finds empty or an error in
// disguise — try once more on another such line, if the retry budget allows; any other answer goes
// back as it is, streamed as it arrives. Every attempt's outcome goes to the outcome reporter.

import {
  type LineEjector,
  type Logger,
  pickPastEjected,
  type RetryBudget,
  type Rng,
  type RouterClient,
  requestedMaxTokens,
  type TableLine,
  type TableSnapshot,
  type WeightedPicker,
} from "@linewatch/router-client";
import type { Dispatcher } from "undici";
import type { AttemptReport } from "./attempt-report";
import type { ClientHeaders } from "./client-headers";
import { type LocalError, localErrorBody } from "./local-errors";
import { outcomeOfStatus, type RouterMetrics } from "./metrics";
import type { ResponseSink } from "./response-sink";
import { PROTOCOL_NAMES, type Surface } from "./surfaces";
import { type Attempt, type AttemptOwner, type AttemptResult, attemptLine } from "./upstream";

export const LINE_HEADER = "x-linewatch-line";
/** On an answer from a second line: what the first attempt got (e.g. `http_5xx`, `empty`, `masked_error`). */
export const RETRY_HEADER = "x-linewatch-retried";
export const VERSION_HEADER = "x-linewatch-table-version";
export const AFFINITY_HEADER = "x-linewatch-affinity";

export type TableSource = Pick<RouterClient, "snapshot" | "routes" | "routesKnown">;

export interface ProxyDeps {
  tables: TableSource;
  dispatcher: Dispatcher;
  metrics: RouterMetrics;
  rng: Rng;
  logger: Logger;
  upstreamTimeoutMs: number;
  now: () => number;
  budget: RetryBudget;
  /** Lines whose last answers all failed get no first attempts for a few seconds. */
  ejector: LineEjector;
  /** In-band answer check (docs/live-evidence.md); null: outcomes by status only. */
  check: { cutMinTokens: number } | null;
  /** Where each attempt's outcome goes (the outcome reporter). */
  recordOutcome(line: TableLine, outcome: AttemptReport): void;
  /** A first attempt the table gave `line` that went elsewhere because `line` was ejected (the outcome reporter). */
  recordHeldBack(line: TableLine): void;
  /** The ejector just took `line` out: the failures that did it should reach the control plane now. */
  onEjected(line: TableLine): void;
}

export interface ProxyRequest {
  /** What the path is: its protocol, answer kind and error shape. */
  surface: Surface;
  /** Path after `/v1` with its query string, e.g. `/chat/completions`. */
  path: string;
  body: Buffer;
  affinityHeader: string | undefined;
  accept: string | undefined;
  /** What of the client's headers goes on to the line. */
  client: ClientHeaders;
  sink: ResponseSink;
}

function parseBody(body: Buffer): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    // Not JSON: a 400 to the client is the outcome, not an error of the router.
    return null;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function tags(line: string | null, version: number | null): Record<string, string> {
  const h: Record<string, string> = {};
  if (line !== null) h[LINE_HEADER] = line;
  if (version !== null) h[VERSION_HEADER] = String(version);
  return h;
}

interface AttemptContext {
  deps: ProxyDeps;
  req: ProxyRequest;
  route: string;
  body: Record<string, unknown>;
  version: string;
  accept: string;
  current: Attempt | null;
  maxTokens: number | null;
}

const nonEmpty = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/**
 * The header, else what the request's protocol has for a session: Anthropic `metadata.user_id`,
 * OpenAI `user` or `prompt_cache_key` (prompt caching pays off only while a session stays on its line).
 */
function affinityKeyOf(req: ProxyRequest, body: Record<string, unknown>): string | undefined {
  if (req.affinityHeader !== undefined) return req.affinityHeader;
  if (req.surface.dialect === "anthropic") {
    const metadata = body.metadata;
    return typeof metadata === "object" && metadata !== null ? nonEmpty((metadata as { user_id?: unknown }).user_id) : undefined;
  }
  return nonEmpty(body.user) ?? nonEmpty(body.prompt_cache_key);
}

/** One attempt's side in the proxy: the retry budget of its route and where its outcome goes. */
class LineAttempt implements AttemptOwner {
  constructor(
    private readonly deps: ProxyDeps,
    private readonly route: string,
    private readonly line: TableLine,
  ) {}

  tryRetry(): boolean {
    const deps = this.deps;
    if (deps.budget.tryRetry(deps.now())) return true;
    deps.metrics.budgetExhausted(this.route);
    return false;
  }

  onOutcome(o: AttemptReport): void {
    const deps = this.deps;
    const line = this.line;
    const ejected = deps.ejector.observe(line.id, o.outcome !== "ok" && o.outcome !== "http_4xx", deps.now());
    deps.metrics.answer(this.route, line.name, o);
    deps.recordOutcome(line, o);
    if (ejected) deps.onEjected(line);
  }
}

async function attemptOn(ctx: AttemptContext, line: TableLine, sendAny: boolean, retried: string | null): Promise<AttemptResult> {
  const { deps, route } = ctx;
  ctx.body.model = line.model;
  const tags = [LINE_HEADER, line.name, VERSION_HEADER, ctx.version];
  if (retried !== null) tags.push(RETRY_HEADER, retried);
  ctx.current = attemptLine({
    dispatcher: deps.dispatcher,
    line,
    path: ctx.req.path,
    body: JSON.stringify(ctx.body),
    accept: ctx.accept,
    client: ctx.req.client,
    timeoutMs: deps.upstreamTimeoutMs,
    sink: ctx.req.sink,
    sendAny,
    check: deps.check === null ? null : { kind: ctx.req.surface.kind, cutMinTokens: deps.check.cutMinTokens, maxTokens: ctx.maxTokens },
    owner: new LineAttempt(deps, route, line),
    tags,
    metrics: deps.metrics,
    route,
  });
  const r = await ctx.current.result;
  if (r.type === "failed") deps.metrics.attempt(route, line.name, r.error, null);
  else deps.metrics.attempt(route, line.name, outcomeOfStatus(r.status), r.seconds);
  return r;
}

/** A request's route and the picker of its protocol's lines, or the error to answer with. */
type Resolved =
  | { route: string; snap: TableSnapshot; picker: WeightedPicker<TableLine> }
  | { error: LocalError; route: string; snap?: TableSnapshot };

function resolveRoute(deps: ProxyDeps, req: ProxyRequest, body: Record<string, unknown>): Resolved {
  const route = body.model;
  if (typeof route !== "string" || route === "") {
    return {
      route: "",
      error: { status: 400, code: "missing_model", message: "`model` is required: the linewatch route to use.", param: "model" },
    };
  }
  const snap = deps.tables.snapshot(route);
  if (snap === undefined) {
    if (deps.tables.routes().includes(route)) {
      return {
        route,
        error: { status: 503, code: "table_not_loaded", message: `The table of route \`${route}\` has not been loaded yet.` },
      };
    }
    // No route list yet (control plane unreachable since start, no cache file): not a 404.
    if (!deps.tables.routesKnown())
      return { route: "", error: { status: 503, code: "table_not_loaded", message: "The router has not loaded its routes yet." } };
    const message = `The model \`${route}\` does not exist: it is not a linewatch route.`;
    return { route: "", error: { status: 404, code: "model_not_found", message, param: "model" } };
  }
  const protocol = req.surface.protocol;
  const picker = snap.pickerFor(protocol);
  if (picker !== null) return { route, snap, picker };
  if (snap.picker.items.length > 0 && snap.mode !== "panic") {
    // Lines with weight, none of this protocol, and no protocol of the route in panic: none speaks it.
    const message = `Route \`${route}\` has no line that speaks ${PROTOCOL_NAMES[protocol]}; its lines speak ${snap.protocols.join(", ")}.`;
    return { route, snap, error: { status: 404, code: "protocol_not_served", message, param: "model" } };
  }
  const message = `Route \`${route}\` has no usable line for ${PROTOCOL_NAMES[protocol]} (mode ${snap.mode}).`;
  return { route, snap, error: { status: 503, code: "no_line_available", message } };
}

/** Unknown names are not used as metric labels: clients could mint unbounded series. */
function requestOutcomeOf(e: LocalError): "bad_request" | "no_line" | "unknown_route" {
  if (e.status === 400) return "bad_request";
  return e.code === "model_not_found" ? "unknown_route" : "no_line";
}

/** The first attempt's line past ejection; a request held back from a line is counted for it. */
function pickFirst(deps: ProxyDeps, route: string, picker: WeightedPicker<TableLine>, affinityKey: string | undefined): TableLine | null {
  const pick = pickPastEjected(picker, deps.ejector.ejected(deps.now()), deps.rng, affinityKey);
  if (pick === null) return null;
  if (pick.heldBackFrom !== null) {
    deps.metrics.heldBack(route, pick.heldBackFrom.name);
    deps.recordHeldBack(pick.heldBackFrom);
  }
  return pick.line;
}

/** Answers one proxied request on `req.sink`; resolves once the status has been decided. */
export async function proxyRequest(deps: ProxyDeps, req: ProxyRequest): Promise<void> {
  const metrics = deps.metrics;
  const sink = req.sink;
  const dialect = req.surface.dialect;
  const body = parseBody(req.body);
  if (body === null) {
    metrics.request("", "none", "bad_request");
    sink.sendLocal(
      400,
      {},
      localErrorBody(dialect, { status: 400, code: "invalid_json", message: "The request body must be a JSON object." }),
    );
    return;
  }
  const resolved = resolveRoute(deps, req, body);
  if ("error" in resolved) {
    metrics.request(resolved.route, "none", requestOutcomeOf(resolved.error));
    sink.sendLocal(resolved.error.status, tags(null, resolved.snap?.version ?? null), localErrorBody(dialect, resolved.error));
    return;
  }
  const { route, snap, picker } = resolved;
  const affinityKey = affinityKeyOf(req, body);
  const first = pickFirst(deps, route, picker, affinityKey);
  if (first === null) {
    metrics.request(route, "none", "no_line");
    const error = { status: 503, code: "no_line_available", message: `Route \`${route}\` has no usable line (mode ${snap.mode}).` };
    sink.sendLocal(503, tags(null, snap.version), localErrorBody(dialect, error));
    return;
  }
  const ctx: AttemptContext = {
    deps,
    req,
    route,
    body,
    version: String(snap.version),
    accept: req.accept ?? "application/json",
    current: null,
    maxTokens: requestedMaxTokens(body, req.surface.kind),
  };
  sink.onClientGone(() => ctx.current?.cancel());
  deps.budget.request(deps.now());
  await attemptWithRetry(ctx, picker, first, affinityKey);
}

/** The first attempt and, when it may be retried and a second line is left, one more on another line. */
async function attemptWithRetry(
  ctx: AttemptContext,
  picker: WeightedPicker<TableLine>,
  first: TableLine,
  affinityKey: string | undefined,
): Promise<void> {
  const { deps, route } = ctx;
  const metrics = deps.metrics;
  // A second line exists iff the protocol's lines have two with weight; only then is a bad answer held back.
  const canRetry = picker.items.length > 1;
  let line = first;
  let result = await attemptOn(ctx, first, !canRetry, null);
  // A refused answer took its retry from the budget already; a failure takes it here.
  const failed = result.type === "failed" && result.error !== "aborted";
  if (canRetry && (result.type === "refused" || (failed && deps.budget.tryRetry(deps.now())))) {
    const second = picker.pick(deps.rng, { affinityKey, exclude: [first.id] });
    if (second !== null) {
      const reason =
        result.type === "refused" ? result.outcome : result.type === "failed" && result.error === "timeout" ? "timeout" : "connect";
      metrics.retry(route, result.type === "refused" ? result.outcome : reason);
      line = second;
      result = await attemptOn(ctx, second, true, reason);
    }
  } else if (canRetry && failed) {
    metrics.budgetExhausted(route);
  }
  finish(ctx, line, result);
}

function sendError(ctx: AttemptContext, line: TableLine, status: number, code: string, message: string): void {
  const { req } = ctx;
  req.sink.sendLocal(status, tags(line.name, Number(ctx.version)), localErrorBody(req.surface.dialect, { status, code, message }));
}

/** What the client gets when the last attempt did not send an answer itself. */
function finish(ctx: AttemptContext, line: TableLine, result: AttemptResult): void {
  const { deps, route } = ctx;
  const metrics = deps.metrics;
  if (result.type === "sent") {
    metrics.request(route, line.name, outcomeOfStatus(result.status));
    return;
  }
  if (result.type === "refused") {
    // Only if no second line could be picked, which canRetry rules out; answer rather than hang.
    metrics.request(route, line.name, "upstream_error");
    sendError(ctx, line, 502, "upstream_error", `Line \`${line.name}\` answered ${result.status}.`);
    return;
  }
  if (result.error === "aborted") return; // the client left; nobody reads an answer
  metrics.request(route, line.name, result.error);
  deps.logger.warn("router: upstream failed", { route, line: line.name, error: result.error, message: result.message });
  if (result.error === "timeout") sendError(ctx, line, 504, "upstream_timeout", `Line \`${line.name}\` of route \`${route}\` timed out.`);
  else sendError(ctx, line, 502, "upstream_unreachable", `Line \`${line.name}\` of route \`${route}\` is unreachable.`);
}
