// Anthropic Messages API: POST {baseUrl}/messages, baseUrl ending in /v1.
import {
  errorMessageOf,
  excerpt,
  finiteOrNull,
  httpErrorResult,
  is2xx,
  isRecord,
  joinUrl,
  mergeHeaders,
  parseError,
  parseJson,
  probeBody,
  protocolError,
  stringOrNull,
  totalTokens,
} from "./http";
import { anthropicSdkHeaders } from "./sdk-headers";
import { looksLikeSse, parseSse } from "./sse";
import type { AnswerUsage, ParsedResponse, ProtocolAdapter } from "./types";

export const anthropicMessagesAdapter: ProtocolAdapter = {
  protocol: "anthropic-messages",

  buildProbe(target, filledRequest, opts) {
    return {
      url: joinUrl(target.baseUrl, "/messages"),
      method: "POST",
      headers: mergeHeaders(
        anthropicSdkHeaders(target.apiKey, filledRequest, opts?.platform, pinnedVersion(target.headers)),
        target.headers,
      ),
      body: probeBody(target.model, filledRequest, opts?.stream),
    };
  },

  parseResponse(status, bodyText) {
    if (!is2xx(status)) return httpErrorResult(status, bodyText);
    if (looksLikeSse(bodyText)) return parseStream(bodyText);
    const parsed = parseJson(bodyText);
    if (!parsed.ok) return parseError(`body is not JSON (${excerpt(bodyText, 80)})`, parsed.message);
    const json = parsed.value;
    if (!isRecord(json)) return protocolError("body is not a JSON object");
    const upstreamError = errorMessageOf(json);
    if (upstreamError !== null) return protocolError(`error in a 2xx body: ${upstreamError}`);
    if (!Array.isArray(json.content)) return protocolError("no content array in the message");
    const content = json.content
      .map((block) => (isRecord(block) && block.type === "text" && typeof block.text === "string" ? block.text : ""))
      .join("");
    const usage = usageOf(json.usage);
    return {
      ok: true,
      content,
      json,
      tokens: totalTokens(usage),
      usage,
      finishReason: stringOrNull(json.stop_reason),
      id: stringOrNull(json.id),
    };
  },
};

/** The `anthropic-version` a line's own headers set, whatever their case. */
function pinnedVersion(headers: Record<string, string>): string | undefined {
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === "anthropic-version") return value;
  return undefined;
}

/**
 * `input_tokens` counts only what was neither read from nor written to the prompt cache: the prompt
 * is all three together, which stays the same whether a line caches or not.
 */
function usageOf(usage: unknown): AnswerUsage {
  if (!isRecord(usage)) return { input: null, output: null };
  const parts = [usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens].map(finiteOrNull);
  const known = parts.filter((n): n is number => n !== null);
  return { input: known.length === 0 ? null : known.reduce((a, n) => a + n, 0), output: finiteOrNull(usage.output_tokens) };
}

/** message_start … content_block_delta (text_delta) … message_delta … message_stop. */
function parseStream(bodyText: string): ParsedResponse {
  let content = "";
  let done = false;
  let stopReason: unknown = null;
  let message: Record<string, unknown> = {};
  const usage: Record<string, unknown> = {};
  for (const event of parseSse(bodyText)) {
    const parsed = parseJson(event.data);
    if (!parsed.ok) return parseError(`stream event is not JSON (${excerpt(event.data, 80)})`, parsed.message);
    const data = parsed.value;
    if (!isRecord(data)) return protocolError("stream event is not a JSON object");
    const type = typeof data.type === "string" ? data.type : event.event;
    if (type === "error") return protocolError(`error in the stream: ${errorMessageOf(data) ?? "unknown"}`);
    if (type === "message_start" && isRecord(data.message)) {
      message = data.message;
      if (isRecord(message.usage)) Object.assign(usage, message.usage);
    } else if (type === "content_block_start" && isRecord(data.content_block)) {
      if (typeof data.content_block.text === "string") content += data.content_block.text;
    } else if (type === "content_block_delta" && isRecord(data.delta)) {
      if (data.delta.type === "text_delta" && typeof data.delta.text === "string") content += data.delta.text;
    } else if (type === "message_delta") {
      if (isRecord(data.delta) && data.delta.stop_reason != null) stopReason = data.delta.stop_reason;
      if (isRecord(data.usage)) Object.assign(usage, data.usage);
    } else if (type === "message_stop") {
      done = true;
    }
  }
  if (!done && stopReason === null) {
    return protocolError(`stream ended before message_stop after ${content.length} characters`);
  }
  const json = {
    id: message.id ?? null,
    type: "message",
    role: "assistant",
    model: message.model ?? null,
    content: [{ type: "text", text: content }],
    stop_reason: stopReason,
    usage,
  };
  const counted = usageOf(usage);
  return {
    ok: true,
    content,
    json,
    tokens: totalTokens(counted),
    usage: counted,
    finishReason: stringOrNull(stopReason),
    id: stringOrNull(message.id),
  };
}
