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
  protocolError,
} from "./http";
import { looksLikeSse, parseSse } from "./sse";
import type { ParsedResponse, ProtocolAdapter } from "./types";

export const ANTHROPIC_VERSION = "2023-06-01";

export const anthropicMessagesAdapter: ProtocolAdapter = {
  protocol: "anthropic-messages",

  buildProbe(target, filledRequest, opts) {
    const body: Record<string, unknown> = { ...filledRequest, model: target.model };
    if (opts?.stream !== undefined) body.stream = opts.stream;
    return {
      url: joinUrl(target.baseUrl, "/messages"),
      method: "POST",
      headers: mergeHeaders(
        {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "anthropic-version": ANTHROPIC_VERSION,
        },
        target.apiKey === null ? {} : { "x-api-key": target.apiKey },
        target.headers,
      ),
      body: JSON.stringify(body),
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
    return { ok: true, content, json, tokens: tokensOf(json.usage) };
  },
};

function tokensOf(usage: unknown): number | null {
  if (!isRecord(usage)) return null;
  const input = finiteOrNull(usage.input_tokens);
  const output = finiteOrNull(usage.output_tokens);
  return input === null && output === null ? null : (input ?? 0) + (output ?? 0);
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
  return { ok: true, content, json, tokens: tokensOf(usage) };
}
