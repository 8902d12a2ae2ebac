// OpenAI Responses-shaped bodies: the Response object and its SSE events.
import type { Reply } from "./line";
import { splitContent } from "./openai";

function usageOf(reply: Reply): Record<string, unknown> | null {
  if (!reply.usage) return null;
  return {
    input_tokens: reply.usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: reply.usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: reply.usage.total_tokens,
  };
}

const messageId = (reply: Reply) => `msg_${reply.id.slice("resp_".length)}`;

function messageItem(reply: Reply, status: "in_progress" | "completed"): Record<string, unknown> {
  const content = status === "completed" ? [{ type: "output_text", text: reply.content, annotations: [], logprobs: [] }] : [];
  return { id: messageId(reply), type: "message", status, role: "assistant", content };
}

function functionCall(reply: Reply, status: "in_progress" | "completed"): Record<string, unknown> {
  const call = reply.toolCall as { id: string; name: string };
  return {
    id: `fc_${call.id}`,
    type: "function_call",
    status,
    call_id: `call_${call.id}`,
    name: call.name,
    arguments: status === "completed" ? "{}" : "",
  };
}

function outputOf(reply: Reply): Record<string, unknown>[] {
  if (reply.toolCall) return [functionCall(reply, "completed")];
  return reply.content === "" ? [] : [messageItem(reply, "completed")];
}

/** The Response object; `status` in_progress for the first stream events. */
export function responseBody(reply: Reply, status: "in_progress" | "final" = "final"): Record<string, unknown> {
  const incomplete = reply.finishReason === "length";
  const body: Record<string, unknown> = {
    id: reply.id,
    object: "response",
    created_at: reply.created,
    status: status === "in_progress" ? "in_progress" : incomplete ? "incomplete" : "completed",
    error: null,
    incomplete_details: status === "final" && incomplete ? { reason: "max_output_tokens" } : null,
    instructions: null,
    max_output_tokens: null,
    model: reply.model,
    output: status === "in_progress" ? [] : outputOf(reply),
    parallel_tool_calls: true,
    previous_response_id: null,
    store: true,
    tool_choice: "auto",
    tools: [],
    truncation: "disabled",
    usage: status === "in_progress" ? null : usageOf(reply),
    metadata: {},
  };
  if (body.usage === null && status === "final") delete body.usage;
  return body;
}

/** created, in_progress, the message item and its text part in ~32-character deltas, completed. */
export function responseStreamEvents(reply: Reply): string[] {
  let seq = 0;
  const event = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const events = [
    event("response.created", { response: responseBody(reply, "in_progress") }),
    event("response.in_progress", { response: responseBody(reply, "in_progress") }),
  ];
  if (reply.toolCall) {
    const fc = { item_id: functionCall(reply, "completed").id, output_index: 0 };
    events.push(
      event("response.output_item.added", { output_index: 0, item: functionCall(reply, "in_progress") }),
      event("response.function_call_arguments.delta", { ...fc, delta: "{}" }),
      event("response.function_call_arguments.done", { ...fc, arguments: "{}" }),
      event("response.output_item.done", { output_index: 0, item: functionCall(reply, "completed") }),
      event("response.completed", { response: responseBody(reply) }),
    );
    return events;
  }
  const item = { item_id: messageId(reply), output_index: 0 };
  events.push(
    event("response.output_item.added", { output_index: 0, item: messageItem(reply, "in_progress") }),
    event("response.content_part.added", { ...item, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }),
  );
  for (const delta of splitContent(reply.content)) {
    events.push(event("response.output_text.delta", { ...item, content_index: 0, delta, logprobs: [] }));
  }
  events.push(event("response.output_text.done", { ...item, content_index: 0, text: reply.content, logprobs: [] }));
  events.push(
    event("response.content_part.done", { ...item, content_index: 0, part: { type: "output_text", text: reply.content, annotations: [] } }),
  );
  events.push(event("response.output_item.done", { output_index: 0, item: messageItem(reply, "completed") }));
  const final = responseBody(reply);
  events.push(event(final.status === "incomplete" ? "response.incomplete" : "response.completed", { response: final }));
  return events;
}

/** What a failing upstream sends inside a 200 stream. */
export function responseStreamError(sequence: number): string {
  const data = {
    type: "error",
    code: "server_error",
    message: "The server had an error while processing your request.",
    param: null,
    sequence_number: sequence,
  };
  return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
}
