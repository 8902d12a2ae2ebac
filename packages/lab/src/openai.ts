// OpenAI-shaped bodies: completions, stream chunks, embeddings, models, errors.
import type { Reply } from "./line";

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function errorBody(message: string, type: string, code: string | null = null, param: string | null = null): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

/** The error a line answers with for a status it was told to fail with. */
export function statusErrorBody(status: number): OpenAIErrorBody {
  if (status === 429) {
    return errorBody("Rate limit reached for requests. Please try again later.", "requests", "rate_limit_exceeded");
  }
  if (status >= 500) return errorBody("The server had an error while processing your request.", "server_error");
  return errorBody(`The upstream refused the request with status ${status}.`, "invalid_request_error");
}

export function chatCompletionBody(reply: Reply): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: reply.id,
    object: "chat.completion",
    created: reply.created,
    model: reply.model,
    choices: [
      {
        index: 0,
        message: reply.toolCall
          ? { role: "assistant", content: null, refusal: null, tool_calls: [toolCallOf(reply.toolCall, "{}")] }
          : { role: "assistant", content: reply.content, refusal: null },
        logprobs: null,
        finish_reason: reply.toolCall ? "tool_calls" : reply.finishReason,
      },
    ],
  };
  if (reply.usage) body.usage = reply.usage;
  return body;
}

function toolCallOf(call: { id: string; name: string }, args: string, index?: number): Record<string, unknown> {
  return {
    ...(index === undefined ? {} : { index }),
    id: `call_${call.id}`,
    type: "function",
    function: { name: call.name, arguments: args },
  };
}

export function textCompletionBody(reply: Reply): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: reply.id,
    object: "text_completion",
    created: reply.created,
    model: reply.model,
    choices: [{ index: 0, text: reply.content, logprobs: null, finish_reason: reply.finishReason }],
  };
  if (reply.usage) body.usage = reply.usage;
  return body;
}

/** Content pieces for SSE: several chunks even for a short answer, ~32 characters each. */
export function splitContent(content: string): string[] {
  const chars = Array.from(content);
  if (chars.length === 0) return [];
  const count = Math.max(Math.min(chars.length, 3), Math.ceil(chars.length / 32));
  const size = Math.ceil(chars.length / count);
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(""));
  return pieces;
}

/**
 * The SSE events of one streamed answer, `[DONE]` included. Usage rides on a last chunk
 * with no choices, and only when the request asked for it (`stream_options.include_usage`).
 */
export function streamEvents(reply: Reply, kind: "chat" | "text", includeUsage: boolean): string[] {
  const head = {
    id: reply.id,
    object: kind === "chat" ? "chat.completion.chunk" : "text_completion",
    created: reply.created,
    model: reply.model,
  };
  const choice = (delta: string | null, first: boolean, finish: string | null) =>
    kind === "chat"
      ? {
          index: 0,
          delta: delta === null ? {} : first ? { role: "assistant", content: delta } : { content: delta },
          logprobs: null,
          finish_reason: finish,
        }
      : { index: 0, text: delta ?? "", logprobs: null, finish_reason: finish };
  const events: string[] = [];
  if (kind === "chat") events.push(sse({ ...head, choices: [choice("", true, null)] }));
  for (const piece of splitContent(reply.content)) events.push(sse({ ...head, choices: [choice(piece, false, null)] }));
  if (kind === "chat" && reply.toolCall) {
    const delta = (args: string, first: boolean) => ({
      index: 0,
      delta: {
        tool_calls: [
          first ? toolCallOf(reply.toolCall as { id: string; name: string }, args, 0) : { index: 0, function: { arguments: args } },
        ],
      },
      logprobs: null,
      finish_reason: null,
    });
    events.push(sse({ ...head, choices: [delta("", true)] }), sse({ ...head, choices: [delta("{}", false)] }));
  }
  events.push(sse({ ...head, choices: [choice(null, false, reply.toolCall ? "tool_calls" : reply.finishReason)] }));
  if (includeUsage && reply.usage) events.push(sse({ ...head, choices: [], usage: reply.usage }));
  events.push("data: [DONE]\n\n");
  return events;
}

function sse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

export function embeddingsBody(
  model: string,
  vectors: number[][],
  usage: { prompt_tokens: number; total_tokens: number } | null,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    object: "list",
    data: vectors.map((embedding, index) => ({ object: "embedding", index, embedding })),
    model,
  };
  if (usage) body.usage = usage;
  return body;
}

export function modelsBody(model: string, created: number): Record<string, unknown> {
  return { object: "list", data: [{ id: model, object: "model", created, owned_by: "linewatch-lab" }] };
}
