// Anthropic-shaped bodies: messages, their SSE events, token counts, errors.
import type { Reply } from "./line";
import { splitContent } from "./openai";

export interface AnthropicErrorBody {
  type: "error";
  error: { type: string; message: string };
  request_id: string;
}

export function anthropicError(type: string, message: string): AnthropicErrorBody {
  return { type: "error", error: { type, message }, request_id: "req_lab" };
}

/** The error a line answers with for a status it was told to fail with, as the Anthropic API words it. */
export function anthropicStatusError(status: number): AnthropicErrorBody {
  if (status === 429) return anthropicError("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit.");
  if (status === 529) return anthropicError("overloaded_error", "Overloaded");
  if (status >= 500) return anthropicError("api_error", "Internal server error");
  const types: Record<number, string> = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
  };
  return anthropicError(types[status] ?? "invalid_request_error", `The upstream refused the request with status ${status}.`);
}

/** A 200 that is an error: what a relay whose account ran dry answers. */
export const ANTHROPIC_MASKED_ERROR = anthropicError(
  "invalid_request_error",
  "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
);

function usageOf(reply: Reply): Record<string, number> | null {
  if (!reply.usage) return null;
  return {
    input_tokens: reply.usage.prompt_tokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: reply.usage.completion_tokens,
  };
}

const stopReason = (reply: Reply) => (reply.toolCall ? "tool_use" : reply.finishReason === "length" ? "max_tokens" : "end_turn");

function contentOf(reply: Reply): Record<string, unknown>[] {
  if (reply.toolCall) return [{ type: "tool_use", id: `toolu_${reply.toolCall.id}`, name: reply.toolCall.name, input: {} }];
  return reply.content === "" ? [] : [{ type: "text", text: reply.content }];
}

export function messageBody(reply: Reply): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: reply.id,
    type: "message",
    role: "assistant",
    model: reply.model,
    content: contentOf(reply),
    stop_reason: stopReason(reply),
    stop_sequence: null,
  };
  const usage = usageOf(reply);
  if (usage) body.usage = usage;
  return body;
}

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** message_start, one text block in ~32-character deltas, message_delta, message_stop. */
export function messageStreamEvents(reply: Reply): string[] {
  const usage = usageOf(reply);
  const events = [
    event("message_start", {
      message: {
        ...messageBody(reply),
        content: [],
        stop_reason: null,
        ...(usage ? { usage: { ...usage, output_tokens: 1 } } : {}),
      },
    }),
    event("content_block_start", {
      index: 0,
      content_block: reply.toolCall ? { ...contentOf(reply)[0], input: {} } : { type: "text", text: "" },
    }),
    event("ping", {}),
  ];
  if (reply.toolCall) events.push(event("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: "{}" } }));
  for (const text of splitContent(reply.content)) {
    events.push(event("content_block_delta", { index: 0, delta: { type: "text_delta", text } }));
  }
  events.push(event("content_block_stop", { index: 0 }));
  events.push(
    event("message_delta", {
      delta: { stop_reason: stopReason(reply), stop_sequence: null },
      ...(usage ? { usage: { output_tokens: usage.output_tokens } } : {}),
    }),
  );
  events.push(event("message_stop", {}));
  return events;
}

/** What an overloaded upstream sends inside a 200 stream. */
export const ANTHROPIC_STREAM_ERROR = `event: error\ndata: ${JSON.stringify(anthropicError("overloaded_error", "Overloaded"))}\n\n`;
