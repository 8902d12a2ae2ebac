// OpenAI Responses API: POST {baseUrl}/responses, baseUrl ending in /v1. The answer is the text of
// the `output_text` parts of the `message` items in `output`; `status` says how it ended.
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
import { openAiSdkHeaders } from "./sdk-headers";
import { looksLikeSse, parseSse } from "./sse";
import type { AnswerUsage, ParsedResponse, ProtocolAdapter } from "./types";

export const openAiResponsesAdapter: ProtocolAdapter = {
  protocol: "openai-responses",

  buildProbe(target, filledRequest, opts) {
    return {
      url: joinUrl(target.baseUrl, "/responses"),
      method: "POST",
      headers: mergeHeaders(openAiSdkHeaders(target.apiKey, opts?.platform), target.headers),
      body: probeBody(target.model, filledRequest, opts?.stream),
    };
  },

  parseResponse(status, bodyText) {
    if (!is2xx(status)) return httpErrorResult(status, bodyText);
    if (looksLikeSse(bodyText)) return parseStream(bodyText);
    const parsed = parseJson(bodyText);
    if (!parsed.ok) return parseError(`body is not JSON (${excerpt(bodyText, 80)})`, parsed.message);
    return readResponse(parsed.value, null);
  },
};

/** The text of every `output_text` part of the `message` items. */
export function responseText(output: unknown[]): string {
  let text = "";
  for (const item of output) {
    if (!isRecord(item) || item.type !== "message" || !Array.isArray(item.content)) continue;
    for (const part of item.content) {
      if (isRecord(part) && part.type === "output_text" && typeof part.text === "string") text += part.text;
    }
  }
  return text;
}

function usageOf(usage: unknown): AnswerUsage {
  if (!isRecord(usage)) return { input: null, output: null };
  return { input: finiteOrNull(usage.input_tokens), output: finiteOrNull(usage.output_tokens) };
}

/**
 * A whole Response object. `streamed` is the text the deltas of a stream carried (null when not
 * streamed): a stream's answer is what the client read, even if the final object leaves it out.
 */
function readResponse(json: unknown, streamed: string | null): ParsedResponse {
  if (!isRecord(json)) return protocolError("body is not a JSON object");
  const status = stringOrNull(json.status);
  if (json.error !== null && json.error !== undefined) {
    return protocolError(`error in a 2xx body: ${errorMessageOf(json) ?? "error object"}`);
  }
  if (status === "failed" || status === "cancelled") return protocolError(`the response ${status}`);
  if (status === "queued" || status === "in_progress") return protocolError(`the response is not finished (status ${status})`);
  if (!Array.isArray(json.output)) return protocolError("no output array in the response");
  const text = responseText(json.output);
  const content = streamed !== null && streamed !== "" ? streamed : text;
  const usage = usageOf(json.usage);
  const reason = isRecord(json.incomplete_details) ? stringOrNull(json.incomplete_details.reason) : null;
  return {
    ok: true,
    content,
    json,
    tokens: finiteOrNull(isRecord(json.usage) ? json.usage.total_tokens : null) ?? totalTokens(usage),
    usage,
    finishReason: status === "incomplete" ? (reason ?? "incomplete") : status,
    id: stringOrNull(json.id),
  };
}

/** response.created … response.output_text.delta … response.completed (or .incomplete / .failed / error). */
function parseStream(bodyText: string): ParsedResponse {
  let content = "";
  let final: unknown = null;
  for (const event of parseSse(bodyText)) {
    const parsed = parseJson(event.data);
    if (!parsed.ok) return parseError(`stream event is not JSON (${excerpt(event.data, 80)})`, parsed.message);
    const data = parsed.value;
    if (!isRecord(data)) return protocolError("stream event is not a JSON object");
    const type = typeof data.type === "string" ? data.type : event.event;
    if (type === "error") return protocolError(`error in the stream: ${stringOrNull(data.message) ?? errorMessageOf(data) ?? "unknown"}`);
    if (type === "response.failed") return protocolError("the response failed in the stream");
    if (type === "response.output_text.delta" && typeof data.delta === "string") content += data.delta;
    else if (type === "response.completed" || type === "response.incomplete") final = data.response;
  }
  if (final === null) return protocolError(`stream ended before response.completed after ${content.length} characters`);
  return readResponse(final, content);
}
