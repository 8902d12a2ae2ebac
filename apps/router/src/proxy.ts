// The request policy of SPEC §8: the request's `model` names the route; pick a line by weight
// (or affinity key); on connect error, timeout, 5xx or 429 try once more on another line of
// the route; any other answer goes back as it is.
import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import type { Logger, RouterClient, Rng, TableLine } from "@linewatch/router-client";
import { type AttemptOutcome, type RouterMetrics, type RequestOutcome, outcomeOfStatus } from "./metrics";
import { type OpenAIErrorBody, openAIError } from "./openai-errors";
import { type AttemptResult, attemptLine } from "./upstream";

export const LINE_HEADER = "x-linewatch-line";
export const VERSION_HEADER = "x-linewatch-table-version";
export const AFFINITY_HEADER = "x-linewatch-affinity";

export type TableSource = Pick<RouterClient, "snapshot" | "routes">;

export interface ProxyDeps {
  tables: TableSource;
  dispatcher: Dispatcher;
  metrics: RouterMetrics;
  rng: Rng;
  logger: Logger;
  upstreamTimeoutMs: number;
}

export interface ProxyRequest {
  /** Path after `/v1` with its query string, e.g. `/chat/completions`. */
  path: string;
  body: Buffer;
  affinityHeader: string | undefined;
  accept: string | undefined;
  /** Aborts the upstream request when the client goes away. */
  signal: AbortSignal | undefined;
}

export type ProxyResult =
  | {
      kind: "upstream";
      route: string;
      line: string;
      status: number;
      headers: Record<string, string | string[]>;
      body: Readable;
    }
  | { kind: "local"; status: number; headers: Record<string, string>; body: OpenAIErrorBody };

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function responseHeaders(upstream: IncomingHttpHeaders, line: string, version: number): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const k in upstream) {
    const v = upstream[k];
    if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  }
  out[LINE_HEADER] = line;
  out[VERSION_HEADER] = String(version);
  return out;
}

function local(status: number, body: OpenAIErrorBody, version: number | null, line: string | null): ProxyResult {
  const headers: Record<string, string> = {};
  if (line !== null) headers[LINE_HEADER] = line;
  if (version !== null) headers[VERSION_HEADER] = String(version);
  return { kind: "local", status, headers, body };
}

const isRetryable = (r: AttemptResult): boolean =>
  r.ok ? r.status >= 500 || r.status === 429 : r.error === "unreachable" || r.error === "timeout";

const attemptOutcome = (r: AttemptResult): AttemptOutcome => (r.ok ? outcomeOfStatus(r.status) : r.error);

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

export async function proxyRequest(deps: ProxyDeps, req: ProxyRequest): Promise<ProxyResult> {
  const { metrics } = deps;
  const body = parseBody(req.body);
  if (body === null) {
    metrics.request("", "none", "bad_request");
    return local(400, openAIError("The request body must be a JSON object.", "invalid_request_error", "invalid_json"), null, null);
  }
  const route = body.model;
  if (typeof route !== "string" || route === "") {
    metrics.request("", "none", "bad_request");
    return local(400, openAIError("`model` is required: the linewatch route to use.", "invalid_request_error", "missing_model", "model"), null, null);
  }
  const snap = deps.tables.snapshot(route);
  if (snap === undefined) {
    if (deps.tables.routes().includes(route)) {
      metrics.request(route, "none", "no_line");
      return local(
        503,
        openAIError(`The table of route \`${route}\` has not been loaded yet.`, "server_error", "table_not_loaded"),
        null,
        null,
      );
    }
    // Unknown names are not used as metric labels: clients could mint unbounded series.
    metrics.request("", "none", "unknown_route");
    return local(
      404,
      openAIError(`The model \`${route}\` does not exist: it is not a linewatch route.`, "invalid_request_error", "model_not_found", "model"),
      null,
      null,
    );
  }

  const affinityKey = req.affinityHeader ?? (typeof body.user === "string" && body.user !== "" ? body.user : undefined);
  const pickOptions = affinityKey === undefined ? undefined : { affinityKey };
  const first = snap.picker.pick(deps.rng, pickOptions);
  if (first === null) {
    metrics.request(route, "none", "no_line");
    return local(
      503,
      openAIError(`Route \`${route}\` has no usable line (mode ${snap.mode}).`, "server_error", "no_line_available"),
      snap.version,
      null,
    );
  }

  const attempt = async (line: TableLine): Promise<AttemptResult> => {
    body.model = line.model;
    const r = await attemptLine({
      dispatcher: deps.dispatcher,
      line,
      path: req.path,
      body: JSON.stringify(body),
      accept: req.accept,
      timeoutMs: deps.upstreamTimeoutMs,
      signal: req.signal,
    });
    metrics.attempt(route, line.name, attemptOutcome(r), r.ok ? r.seconds : null);
    return r;
  };

  let line = first;
  let result = await attempt(first);
  if (isRetryable(result)) {
    const second = snap.picker.pick(deps.rng, { affinityKey, exclude: [first.id] });
    if (second !== null) {
      metrics.retry(route, attemptOutcome(result));
      if (result.ok) {
        // Read and drop the refused answer so its connection goes back to the pool.
        result.body.dump({ limit: 65_536 }).catch(() => undefined);
      }
      line = second;
      result = await attempt(second);
    }
  }

  if (result.ok) {
    metrics.request(route, line.name, outcomeOfStatus(result.status));
    return {
      kind: "upstream",
      route,
      line: line.name,
      status: result.status,
      headers: responseHeaders(result.headers, line.name, snap.version),
      body: result.body,
    };
  }
  if (result.error === "aborted") {
    // The client left; nobody reads this answer.
    return local(499, openAIError("Client closed the request.", "invalid_request_error", "client_closed"), snap.version, line.name);
  }
  const outcome: RequestOutcome = result.error;
  metrics.request(route, line.name, outcome);
  deps.logger.warn("router: upstream failed", { route, line: line.name, error: result.error, message: result.message });
  return result.error === "timeout"
    ? local(504, openAIError(`Line \`${line.name}\` of route \`${route}\` timed out.`, "server_error", "upstream_timeout"), snap.version, line.name)
    : local(502, openAIError(`Line \`${line.name}\` of route \`${route}\` is unreachable.`, "server_error", "upstream_unreachable"), snap.version, line.name);
}
