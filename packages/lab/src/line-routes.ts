// The OpenAI-compatible surface of one virtual line: /v1/chat/completions, /v1/completions,
// /v1/embeddings, /v1/models. Order per request: count, auth, parse, plan, wait, answer.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody, sendJson, type Timers } from "./http-util";
import type { Endpoint, Plan, Reply, VirtualLine } from "./line";
import { chatCompletionBody, embeddingsBody, errorBody, modelsBody, statusErrorBody, streamEvents, textCompletionBody } from "./openai";
import { type PromptView, viewChat, viewCompletion } from "./prompt";

export interface LineRouteContext {
  clock: () => number;
  timers: Timers;
}

const ROUTES: Record<string, { method: string; endpoint: Endpoint }> = {
  "chat/completions": { method: "POST", endpoint: "chat.completions" },
  completions: { method: "POST", endpoint: "completions" },
  embeddings: { method: "POST", endpoint: "embeddings" },
  models: { method: "GET", endpoint: "models" },
};

const DEFAULT_DIMENSIONS = 64;
const MAX_DIMENSIONS = 4096;

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
    sendJson(res, 404, errorBody(`Unknown request URL: ${req.method} /v1/${rest}.`, "invalid_request_error", "unknown_url"));
    return;
  }
  if (req.method !== route.method) {
    sendJson(res, 405, errorBody(`Method ${req.method} is not allowed on /v1/${rest}.`, "invalid_request_error"), { allow: route.method });
    return;
  }
  const seq = line.arrive(route.endpoint);
  const reply = (status: number, body: unknown, headers?: Record<string, string>) => {
    line.answered(status);
    sendJson(res, status, body, headers);
  };

  if (line.apiKey !== null && !bearerMatches(req.headers.authorization, line.apiKey)) {
    reply(401, errorBody("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"));
    return;
  }

  let body: Record<string, unknown> = {};
  if (route.method === "POST") {
    const read = await readBody(req);
    if (!read.ok) {
      reply(413, errorBody("Request body too large.", "invalid_request_error"));
      return;
    }
    const parsed = parseJsonObject(read.text);
    if (!parsed) {
      reply(400, errorBody("We could not parse the JSON body of your request: expected a JSON object.", "invalid_request_error"));
      return;
    }
    body = parsed;
  }

  const request = readRequest(route.endpoint, body);
  if ("invalid" in request) {
    reply(400, errorBody(request.invalid, "invalid_request_error", null, request.param));
    return;
  }

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
      reply(plan.status, statusErrorBody(plan.status), headers);
      return;
    }
    if (plan.action === "masked-error") {
      reply(
        200,
        errorBody(
          "You exceeded your current quota, please check your plan and billing details.",
          "insufficient_quota",
          "insufficient_quota",
        ),
      );
      return;
    }
    const now = ctx.clock();
    switch (request.endpoint) {
      case "models":
        reply(200, modelsBody(line.model, Math.floor(now / 1000)));
        return;
      case "embeddings": {
        const vectors = request.inputs.map((text) => line.embed(text, request.dimensions, plan.fault));
        const tokens = Math.ceil(request.inputs.reduce((n, text) => n + text.length, 0) / 4);
        const usage = plan.fault.mode === "drop-fields" ? null : { prompt_tokens: tokens, total_tokens: tokens };
        reply(200, embeddingsBody(request.model ?? line.model, vectors, usage));
        return;
      }
      case "chat.completions":
      case "completions": {
        const answer = line.reply(request.endpoint, request.model, request.view, seq, plan.fault, now);
        const kind = request.endpoint === "chat.completions" ? "chat" : "text";
        if (request.stream) {
          line.answered(200);
          streamReply(ctx, line, res, answer, kind, request.includeUsage);
        } else {
          reply(200, kind === "chat" ? chatCompletionBody(answer) : textCompletionBody(answer));
        }
      }
    }
  });
}

type ParsedRequest =
  | { invalid: string; param: string | null }
  | { endpoint: "models" }
  | { endpoint: "embeddings"; model: string | null; inputs: string[]; dimensions: number }
  | {
      endpoint: "chat.completions" | "completions";
      model: string | null;
      view: PromptView;
      stream: boolean;
      includeUsage: boolean;
    };

function readRequest(endpoint: Endpoint, body: Record<string, unknown>): ParsedRequest {
  const model = typeof body.model === "string" && body.model !== "" ? body.model : null;
  const stream = body.stream === true;
  const streamOptions = body.stream_options;
  const includeUsage =
    typeof streamOptions === "object" && streamOptions !== null && (streamOptions as { include_usage?: unknown }).include_usage === true;
  switch (endpoint) {
    case "models":
      return { endpoint };
    case "chat.completions": {
      const messages = body.messages;
      if (!Array.isArray(messages) || messages.length === 0) {
        return { invalid: "'messages' is a required property and must be a non-empty array.", param: "messages" };
      }
      if (!messages.every((m) => typeof m === "object" && m !== null && typeof (m as { role?: unknown }).role === "string")) {
        return { invalid: "Each message must be an object with a 'role'.", param: "messages" };
      }
      return { endpoint, model, view: viewChat(messages, body.response_format), stream, includeUsage };
    }
    case "completions": {
      const prompt = body.prompt;
      const text =
        typeof prompt === "string"
          ? prompt
          : Array.isArray(prompt) && prompt.every((p) => typeof p === "string")
            ? prompt.join("\n")
            : null;
      if (text === null) return { invalid: "'prompt' is a required property: a string or an array of strings.", param: "prompt" };
      return { endpoint, model, view: viewCompletion(text), stream, includeUsage };
    }
    case "embeddings": {
      const input = body.input;
      const inputs =
        typeof input === "string"
          ? [input]
          : Array.isArray(input) && input.length > 0
            ? input.map((item) => (typeof item === "string" ? item : JSON.stringify(item)))
            : null;
      if (inputs === null) return { invalid: "'input' is a required property: a string or a non-empty array.", param: "input" };
      const dimensions = body.dimensions ?? DEFAULT_DIMENSIONS;
      if (typeof dimensions !== "number" || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS) {
        return { invalid: `'dimensions' must be an integer in [1, ${MAX_DIMENSIONS}].`, param: "dimensions" };
      }
      return { endpoint, model, inputs, dimensions };
    }
  }
}

function parseJsonObject(text: string): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON: the caller answers 400, which is the outcome we want, not an error of ours.
    return null;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function bearerMatches(header: string | undefined, apiKey: string): boolean {
  if (!header?.startsWith("Bearer ")) return false;
  // Hash both sides so lengths match and the comparison runs in constant time.
  const given = createHash("sha256").update(header.slice("Bearer ".length)).digest();
  const expected = createHash("sha256").update(apiKey).digest();
  return timingSafeEqual(given, expected);
}

function streamReply(
  ctx: LineRouteContext,
  line: VirtualLine,
  res: ServerResponse,
  reply: Reply,
  kind: "chat" | "text",
  includeUsage: boolean,
): void {
  const events = streamEvents(reply, kind, includeUsage);
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
    ctx.timers.after(line.streamChunkDelayMs, writeNext);
  };
  writeNext();
}
