// The request policy of SPEC §8 and §9: the request's `model` names the route; pick a line by
// weight (or affinity key); on connect error, timeout, 5xx or 429 — or a non-streamed 2xx that
// the in-band check finds empty or an error in disguise — try once more on another line of the
// route, if the retry budget allows; any other answer goes back as it is, streamed as it arrives.
// Every attempt's outcome goes to the outcome reporter.

import {
  type AnswerKind,
  type LineEjector,
  type Logger,
  type RetryBudget,
  type Rng,
  type RouterClient,
  requestedMaxTokens,
  type TableLine,
} from "@linewatch/router-client";
import type { Dispatcher } from "undici";
import { outcomeOfStatus, type RouterMetrics } from "./metrics";
import { openAIError } from "./openai-errors";
import type { ResponseSink } from "./response-sink";
import { type Attempt, type AttemptOwner, type AttemptReport, type AttemptResult, attemptLine } from "./upstream";

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
  /** In-band answer check (SPEC §9); null: outcomes by status only. */
  check: { cutMinTokens: number } | null;
  /** Where each attempt's outcome goes (the outcome reporter). */
  recordOutcome(line: TableLine, outcome: AttemptReport): void;
}

export interface ProxyRequest {
  /** Path after `/v1` with its query string, e.g. `/chat/completions`. */
  path: string;
  body: Buffer;
  affinityHeader: string | undefined;
  accept: string | undefined;
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
  kind: AnswerKind;
  maxTokens: number | null;
}

function answerKind(path: string): AnswerKind {
  if (path.startsWith("/chat/")) return "chat";
  if (path.startsWith("/embeddings")) return "embeddings";
  return "text";
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
    deps.ejector.observe(line.id, o.outcome !== "ok" && o.outcome !== "http_4xx", deps.now());
    deps.metrics.answer(this.route, line.name, o);
    deps.recordOutcome(line, o);
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
    timeoutMs: deps.upstreamTimeoutMs,
    sink: ctx.req.sink,
    sendAny,
    check: deps.check === null ? null : { kind: ctx.kind, cutMinTokens: deps.check.cutMinTokens, maxTokens: ctx.maxTokens },
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

/** Answers one proxied request on `req.sink`; resolves once the status has been decided. */
export async function proxyRequest(deps: ProxyDeps, req: ProxyRequest): Promise<void> {
  const metrics = deps.metrics;
  const sink = req.sink;
  const body = parseBody(req.body);
  if (body === null) {
    metrics.request("", "none", "bad_request");
    sink.sendLocal(400, {}, openAIError("The request body must be a JSON object.", "invalid_request_error", "invalid_json"));
    return;
  }
  const route = body.model;
  if (typeof route !== "string" || route === "") {
    metrics.request("", "none", "bad_request");
    sink.sendLocal(
      400,
      {},
      openAIError("`model` is required: the linewatch route to use.", "invalid_request_error", "missing_model", "model"),
    );
    return;
  }
  const snap = deps.tables.snapshot(route);
  if (snap === undefined) {
    if (deps.tables.routes().includes(route)) {
      metrics.request(route, "none", "no_line");
      sink.sendLocal(503, {}, openAIError(`The table of route \`${route}\` has not been loaded yet.`, "server_error", "table_not_loaded"));
      return;
    }
    if (!deps.tables.routesKnown()) {
      // No route list yet (control plane unreachable since start, no cache file): not a 404.
      metrics.request("", "none", "no_line");
      sink.sendLocal(503, {}, openAIError("The router has not loaded its routes yet.", "server_error", "table_not_loaded"));
      return;
    }
    // Unknown names are not used as metric labels: clients could mint unbounded series.
    metrics.request("", "none", "unknown_route");
    sink.sendLocal(
      404,
      {},
      openAIError(
        `The model \`${route}\` does not exist: it is not a linewatch route.`,
        "invalid_request_error",
        "model_not_found",
        "model",
      ),
    );
    return;
  }

  const affinityKey = req.affinityHeader ?? (typeof body.user === "string" && body.user !== "" ? body.user : undefined);
  const ejected = deps.ejector.ejected(deps.now());
  const first =
    (ejected.length > 0 ? snap.picker.pick(deps.rng, { affinityKey, exclude: ejected }) : null) ??
    snap.picker.pick(deps.rng, affinityKey === undefined ? undefined : { affinityKey });
  if (first === null) {
    metrics.request(route, "none", "no_line");
    sink.sendLocal(
      503,
      tags(null, snap.version),
      openAIError(`Route \`${route}\` has no usable line (mode ${snap.mode}).`, "server_error", "no_line_available"),
    );
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
    kind: answerKind(req.path),
    maxTokens: requestedMaxTokens(body),
  };
  sink.onClientGone(() => ctx.current?.cancel());
  deps.budget.request(deps.now());

  // A second line exists iff the table has two lines with weight; only then is a bad answer held back.
  const canRetry = snap.picker.items.length > 1;
  let line = first;
  let result = await attemptOn(ctx, first, !canRetry, null);
  // A refused answer took its retry from the budget already; a failure takes it here.
  const failed = result.type === "failed" && result.error !== "aborted";
  if (canRetry && (result.type === "refused" || (failed && ctx.deps.budget.tryRetry(deps.now())))) {
    const second = snap.picker.pick(deps.rng, { affinityKey, exclude: [first.id] });
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

  if (result.type === "sent") {
    metrics.request(route, line.name, outcomeOfStatus(result.status));
    return;
  }
  if (result.type === "refused") {
    // Only if no second line could be picked, which canRetry rules out; answer rather than hang.
    metrics.request(route, line.name, "upstream_error");
    sink.sendLocal(
      502,
      tags(line.name, snap.version),
      openAIError(`Line \`${line.name}\` answered ${result.status}.`, "server_error", "upstream_error"),
    );
    return;
  }
  if (result.error === "aborted") return; // the client left; nobody reads an answer
  metrics.request(route, line.name, result.error);
  deps.logger.warn("router: upstream failed", { route, line: line.name, error: result.error, message: result.message });
  if (result.error === "timeout") {
    sink.sendLocal(
      504,
      tags(line.name, snap.version),
      openAIError(`Line \`${line.name}\` of route \`${route}\` timed out.`, "server_error", "upstream_timeout"),
    );
  } else {
    sink.sendLocal(
      502,
      tags(line.name, snap.version),
      openAIError(`Line \`${line.name}\` of route \`${route}\` is unreachable.`, "server_error", "upstream_unreachable"),
    );
  }
}
