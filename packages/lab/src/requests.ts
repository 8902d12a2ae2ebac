// Reading a request body per endpoint: what is asked, or why it is refused (as the API would say).
import type { Endpoint } from "./line";
import { type PromptView, toolNamed, viewAnthropic, viewChat, viewCompletion, viewResponses } from "./prompt";

const DEFAULT_DIMENSIONS = 64;
const MAX_DIMENSIONS = 4096;

export type ParsedRequest =
  | { invalid: string; param: string | null }
  | { endpoint: "models" }
  | { endpoint: "embeddings"; model: string | null; inputs: string[]; dimensions: number }
  | { endpoint: "messages.count_tokens"; model: string | null; view: PromptView }
  | {
      endpoint: "chat.completions" | "completions" | "responses" | "messages";
      model: string | null;
      view: PromptView;
      stream: boolean;
      includeUsage: boolean;
    };

const invalid = (message: string, param: string | null): ParsedRequest => ({ invalid: message, param });

function messagesOf(body: Record<string, unknown>): unknown[] | ParsedRequest {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    return invalid("'messages' is a required property and must be a non-empty array.", "messages");
  }
  if (!messages.every((m) => typeof m === "object" && m !== null && typeof (m as { role?: unknown }).role === "string")) {
    return invalid("Each message must be an object with a 'role'.", "messages");
  }
  return messages;
}

function withTool(view: PromptView, tools: unknown): PromptView {
  const toolName = toolNamed(tools, view.user);
  return toolName === null ? view : { ...view, toolName };
}

export function readRequest(endpoint: Endpoint, body: Record<string, unknown>): ParsedRequest {
  const model = typeof body.model === "string" && body.model !== "" ? body.model : null;
  const stream = body.stream === true;
  const streamOptions = body.stream_options;
  const includeUsage =
    typeof streamOptions === "object" && streamOptions !== null && (streamOptions as { include_usage?: unknown }).include_usage === true;
  switch (endpoint) {
    case "models":
      return { endpoint };
    case "chat.completions": {
      const messages = messagesOf(body);
      if (!Array.isArray(messages)) return messages;
      return { endpoint, model, view: withTool(viewChat(messages, body.response_format), body.tools), stream, includeUsage };
    }
    case "messages":
    case "messages.count_tokens": {
      const messages = messagesOf(body);
      if (!Array.isArray(messages)) return messages;
      const view = withTool(viewAnthropic(body.system, messages), body.tools);
      if (endpoint === "messages.count_tokens") return { endpoint, model, view };
      const maxTokens = body.max_tokens;
      if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < 1) {
        return invalid("max_tokens: Field required (a positive integer)", "max_tokens");
      }
      return { endpoint, model, view, stream, includeUsage: true };
    }
    case "responses": {
      const input = body.input;
      if (!(typeof input === "string" || (Array.isArray(input) && input.length > 0))) {
        return invalid("'input' is a required property: a string or a non-empty array of items.", "input");
      }
      return {
        endpoint,
        model,
        view: withTool(viewResponses(body.instructions, input, body.text), body.tools),
        stream,
        includeUsage: true,
      };
    }
    case "completions": {
      const prompt = body.prompt;
      const text =
        typeof prompt === "string"
          ? prompt
          : Array.isArray(prompt) && prompt.every((p) => typeof p === "string")
            ? prompt.join("\n")
            : null;
      if (text === null) return invalid("'prompt' is a required property: a string or an array of strings.", "prompt");
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
      if (inputs === null) return invalid("'input' is a required property: a string or a non-empty array.", "input");
      const dimensions = body.dimensions ?? DEFAULT_DIMENSIONS;
      if (typeof dimensions !== "number" || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS) {
        return invalid(`'dimensions' must be an integer in [1, ${MAX_DIMENSIONS}].`, "dimensions");
      }
      return { endpoint, model, inputs, dimensions };
    }
  }
}

export function parseJsonObject(text: string): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON: the caller answers 400, which is the outcome we want, not an error of ours.
    return null;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}
