// The HTTP surface of one virtual line: the OpenAI endpoints (/v1/chat/completions, /v1/completions,
// /v1/embeddings, /v1/models, /v1/responses) and Anthropic's (/v1/messages, /v1/messages/count_tokens).
// Order per request: count, read, record, auth, parse, plan, wait, answer. Errors come in the shape of
// the endpoint's API, so a client SDK raises its own typed error.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  ANTHROPIC_MASKED_ERROR,
  ANTHROPIC_STREAM_ERROR,
  anthropicError,
  anthropicStatusError,
  messageBody,
  messageStreamEvents,
} from "./anthropic";
import { readBody, sendJson, type Timers } from "./http-util";
import type { Endpoint, Plan, Reply, VirtualLine } from "./line";
import type { FaultSetting } from "./modes";
import { chatCompletionBody, embeddingsBody, errorBody, modelsBody, statusErrorBody, streamEvents, textCompletionBody } from "./openai";
import { type ParsedRequest, parseJsonObject, readRequest } from "./requests";
import { responseBody, responseStreamError, responseStreamEvents } from "./responses";

export interface LineRouteContext {
  clock: () => number;
  timers: Timers;
}

type Dialect = "openai" | "anthropic";

const ROUTES: Record<string, { method: string; endpoint: Endpoint; dialect: Dialect }> = {
  "chat/completions": { method: "POST", endpoint: "chat.completions", dialect: "openai" },
  completions: { method: "POST", endpoint: "completions", dialect: "openai" },
  embeddings: { method: "POST", endpoint: "embeddings", dialect: "openai" },
  models: { method: "GET", endpoint: "models", dialect: "openai" },
  responses: { method: "POST", endpoint: "responses", dialect: "openai" },
  messages: { method: "POST", endpoint: "messages", dialect: "anthropic" },
  "messages/count_tokens": { method: "POST", endpoint: "messages.count_tokens", dialect: "anthropic" },
};

/** API versions the Anthropic endpoints know; 2026-10-21 refuses the sampling fields. */
const ANTHROPIC_VERSIONS = new Set(["2023-06-01", "2026-10-21"]);
const REFUSED_IN_2026 = ["temperature", "top_p", "top_k"];

const clientError = (dialect: Dialect, message: string, param: string | null = null, code: string | null = null) =>
  dialect === "anthropic" ? anthropicError("invalid_request_error", message) : errorBody(message, "invalid_request_error", code, param);
const statusError = (dialect: Dialect, status: number) =>
  dialect === "anthropic" ? anthropicStatusError(status) : statusErrorBody(status);

/** `rest` is the path after `/v1/`. */
export async function handleLineRequest(
  ctx: LineRouteContext,
  line: VirtualLine,
  rest: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const route = ROUTES[rest];
  if (!route) {
    const dialect: Dialect = rest.startsWith("messages") ? "anthropic" : "openai";
    sendJson(res, 404, clientError(dialect, `Unknown request URL: ${req.method} /v1/${rest}.`, null, "unknown_url"));
    return;
  }
  if (req.method !== route.method) {
    sendJson(res, 405, clientError(route.dialect, `Method ${req.method} is not allowed on /v1/${rest}.`), { allow: route.method });
    return;
  }
  const seq = line.arrive(route.endpoint);
  const reply = (status: number, body: unknown, headers?: Record<string, string>) => {
    line.answered(status);
    sendJson(res, status, body, headers);
  };
  const request = await admit(line, route, rest, req, reply);
  if (request === null) return;

  const plan: Plan = line.plan(seq, "view" in request ? request.view.promptChars : 0);
  if (plan.action === "hang") {
    // Accepted and never answered: only the client giving up or close() ends it.
    line.hung();
    return;
  }
  ctx.timers.after(plan.delayMs, () => {
    if (res.destroyed) return;
    if (plan.action === "error") {
      const headers: Record<string, string> = plan.retryAfterSec === null ? {} : { "retry-after": String(plan.retryAfterSec) };
      reply(plan.status, statusError(route.dialect, plan.status), headers);
      return;
    }
    if (plan.action === "masked-error") {
      reply(
        200,
        route.dialect === "anthropic"
          ? ANTHROPIC_MASKED_ERROR
          : errorBody(
              "You exceeded your current quota, please check your plan and billing details.",
              "insufficient_quota",
              "insufficient_quota",
            ),
      );
      return;
    }
    answer({ ctx, headers: flatHeaders(req.headers), line, res, reply, seq, fault: plan.fault }, request);
  });
}

/** Read, record, auth, parse: the request to answer, or null when it was refused (and answered). */
async function admit(
  line: VirtualLine,
  route: (typeof ROUTES)[string],
  rest: string,
  req: IncomingMessage,
  reply: (status: number, body: unknown) => void,
): Promise<Exclude<ParsedRequest, { invalid: string }> | null> {
  const read = route.method === "POST" ? await readBody(req) : ({ ok: true, text: "" } as const);
  line.record({ method: req.method ?? "", path: `/${rest}`, headers: headerPairs(req.rawHeaders), body: read.ok ? read.text : "" });

  if (line.apiKey !== null && !credentialMatches(route.dialect, req, line.apiKey)) {
    const message = "Incorrect API key provided.";
    reply(
      401,
      route.dialect === "anthropic"
        ? anthropicError("authentication_error", "invalid x-api-key")
        : errorBody(message, "invalid_request_error", "invalid_api_key"),
    );
    return null;
  }
  if (!read.ok) {
    reply(
      413,
      route.dialect === "anthropic"
        ? anthropicError("request_too_large", "Request exceeds the maximum size")
        : errorBody("Request body too large.", "invalid_request_error"),
    );
    return null;
  }
  const body = route.method === "POST" ? parseJsonObject(read.text) : {};
  if (!body) {
    reply(400, clientError(route.dialect, "We could not parse the JSON body of your request: expected a JSON object."));
    return null;
  }
  const versionProblem = route.dialect === "anthropic" ? anthropicVersionProblem(req.headers["anthropic-version"], body) : null;
  if (versionProblem !== null) {
    reply(400, anthropicError("invalid_request_error", versionProblem));
    return null;
  }
  const request = readRequest(route.endpoint, body);
  if ("invalid" in request) {
    reply(400, clientError(route.dialect, request.invalid, request.param));
    return null;
  }

  return request;
}

interface AnswerContext {
  ctx: LineRouteContext;
  /** The request's headers (lower-case names), which a relay that recognises probes looks at. */
  headers: Record<string, string>;
  line: VirtualLine;
  res: ServerResponse;
  reply: (status: number, body: unknown) => void;
  seq: number;
  fault: FaultSetting;
}

function answer(a: AnswerContext, request: Exclude<ParsedRequest, { invalid: string }>): void {
  const { line, reply, fault } = a;
  const now = a.ctx.clock();
  switch (request.endpoint) {
    case "models":
      reply(200, modelsBody(line.model, Math.floor(now / 1000)));
      return;
    case "embeddings": {
      const vectors = request.inputs.map((text) => line.embed(text, request.dimensions, fault));
      const tokens = Math.ceil(request.inputs.reduce((n, text) => n + text.length, 0) / 4);
      const usage = fault.mode === "drop-fields" ? null : { prompt_tokens: tokens, total_tokens: tokens };
      reply(200, embeddingsBody(request.model ?? line.model, vectors, usage));
      return;
    }
    case "messages.count_tokens":
      reply(200, { input_tokens: Math.max(1, Math.ceil(request.view.promptChars / 4)) });
      return;
    default: {
      const made = line.reply(request.endpoint, request.model, request.view, a.seq, fault, now, a.headers);
      if (request.stream) {
        line.answered(200);
        streamReply(a, eventsOf(request.endpoint, made, request.includeUsage, fault));
        return;
      }
      const final = fault.mode === "cut" ? stoppedShort(made) : made;
      reply(200, bodyOf(request.endpoint, final));
    }
  }
}

type AnswerEndpoint = "chat.completions" | "completions" | "responses" | "messages";

function bodyOf(endpoint: AnswerEndpoint, reply: Reply): Record<string, unknown> {
  const body =
    endpoint === "messages"
      ? messageBody(reply)
      : endpoint === "responses"
        ? responseBody(reply)
        : endpoint === "chat.completions"
          ? chatCompletionBody(reply)
          : textCompletionBody(reply);
  return reply.extra ? { ...body, ...reply.extra } : body;
}

function flatHeaders(headers: IncomingMessage["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

/** A non-streamed answer under `cut`: its first few tokens, stopped at the token limit. */
function stoppedShort(reply: Reply): Reply {
  const content = Array.from(reply.content).slice(0, 20).join("");
  const completion = Math.ceil(content.length / 4);
  const usage = reply.usage && { ...reply.usage, completion_tokens: completion, total_tokens: reply.usage.prompt_tokens + completion };
  return { ...reply, content, finishReason: "length", usage };
}

/** The answer's SSE events; under `cut`, those before `at` without the closing ones (and an error event for `how: error`). */
function eventsOf(endpoint: AnswerEndpoint, reply: Reply, includeUsage: boolean, fault: FaultSetting): string[] {
  let events: string[];
  let closing: number;
  let error: string;
  if (endpoint === "messages") {
    events = messageStreamEvents(reply);
    closing = 2; // message_delta, message_stop
    error = ANTHROPIC_STREAM_ERROR;
  } else if (endpoint === "responses") {
    events = responseStreamEvents(reply);
    closing = 1; // response.completed
    error = responseStreamError(events.length);
  } else {
    events = streamEvents(reply, endpoint === "chat.completions" ? "chat" : "text", includeUsage);
    closing = includeUsage && reply.usage ? 3 : 2; // the finish chunk, usage, [DONE]
    error = `data: ${JSON.stringify(statusErrorBody(500))}\n\n`;
  }
  if (fault.mode !== "cut") return events;
  const keep = Math.min(events.length - closing, Math.max(1, Math.round(events.length * fault.at)));
  const kept = events.slice(0, keep);
  if (fault.how === "error") kept.push(error);
  return kept;
}

function streamReply(a: AnswerContext, events: string[]): void {
  const { res, line } = a;
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  if (line.streamChunkDelayMs <= 0) {
    res.end(events.join(""));
    return;
  }
  let next = 0;
  const writeNext = () => {
    if (res.destroyed) return;
    const event = events[next++] as string;
    if (next >= events.length) {
      res.end(event);
      return;
    }
    res.write(event);
    a.ctx.timers.after(line.streamChunkDelayMs, writeNext);
  };
  writeNext();
}

function anthropicVersionProblem(header: string | string[] | undefined, body: Record<string, unknown>): string | null {
  const version = Array.isArray(header) ? header[0] : header;
  if (version === undefined || version === "") return "anthropic-version: header is required";
  if (!ANTHROPIC_VERSIONS.has(version)) return `anthropic-version: unknown version ${JSON.stringify(version)}`;
  const refused = version === "2026-10-21" ? REFUSED_IN_2026.find((f) => body[f] !== undefined) : undefined;
  return refused === undefined ? null : `${refused}: Extra inputs are not permitted`;
}

function headerPairs(raw: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i] as string, raw[i + 1] as string]);
  return pairs;
}

/** OpenAI: `Authorization: Bearer`. Anthropic: `x-api-key`, or the bearer token its 1.x SDKs send. */
function credentialMatches(dialect: Dialect, req: IncomingMessage, apiKey: string): boolean {
  const auth = req.headers.authorization;
  const bearer = auth?.startsWith("Bearer ") ? auth.slice("Bearer ".length) : null;
  const xApiKey = req.headers["x-api-key"];
  const given = dialect === "anthropic" && typeof xApiKey === "string" && xApiKey !== "" ? xApiKey : bearer;
  if (given === null) return false;
  // Hash both sides so lengths match and the comparison runs in constant time.
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(apiKey).digest();
  return timingSafeEqual(a, b);
}
