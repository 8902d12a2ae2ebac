// OpenAI-compatible chat completions: POST {baseUrl}/chat/completions, baseUrl ending in /v1.
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
} from "./http";
import { openAiSdkHeaders } from "./sdk-headers";
import { looksLikeSse, parseSse } from "./sse";
import type { AnswerUsage, ParsedResponse, ProtocolAdapter } from "./types";

export const openAiChatAdapter: ProtocolAdapter = {
  protocol: "openai-chat",

  buildProbe(target, filledRequest, opts) {
    return {
      url: joinUrl(target.baseUrl, "/chat/completions"),
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
    return readCompletion(parsed.value);
  },
};

function readCompletion(json: unknown): ParsedResponse {
  if (!isRecord(json)) return protocolError("body is not a JSON object");
  const upstreamError = errorMessageOf(json);
  if (upstreamError !== null) return protocolError(`error in a 2xx body: ${upstreamError}`);
  const choice = firstChoice(json.choices);
  if (choice === null) return protocolError("no choices in the completion");
  const content = isRecord(choice.message) ? textOf(choice.message.content) : typeof choice.text === "string" ? choice.text : undefined;
  if (content === undefined) return protocolError("choices[0].message.content is not text");
  const usage = usageOf(json.usage);
  return {
    ok: true,
    content,
    json,
    tokens: tokensOf(json.usage),
    usage,
    finishReason: stringOrNull(choice.finish_reason),
    id: stringOrNull(json.id),
  };
}

/** The choice with index 0 (or the first one when upstreams leave out `index`). */
function firstChoice(choices: unknown): Record<string, unknown> | null {
  if (!Array.isArray(choices)) return null;
  const records = choices.filter(isRecord);
  return records.find((c) => (c.index ?? 0) === 0) ?? records[0] ?? null;
}

/**
 * A string; null (tool call, refusal, all tokens spent on reasoning) is an empty answer for the
 * content scoring to judge; some servers send an array of text parts.
 */
function textOf(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  if (Array.isArray(content)) {
    return content.map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : "")).join("");
  }
  return undefined;
}

/** `prompt_tokens` / `completion_tokens`; servers that speak both dialects may send `input_tokens` / `output_tokens`. */
function usageOf(usage: unknown): AnswerUsage {
  if (!isRecord(usage)) return { input: null, output: null };
  return {
    input: finiteOrNull(usage.prompt_tokens) ?? finiteOrNull(usage.input_tokens),
    output: finiteOrNull(usage.completion_tokens) ?? finiteOrNull(usage.output_tokens),
  };
}

function tokensOf(usage: unknown): number | null {
  if (!isRecord(usage)) return null;
  const total = finiteOrNull(usage.total_tokens);
  if (total !== null) return total;
  const prompt = finiteOrNull(usage.prompt_tokens);
  const completion = finiteOrNull(usage.completion_tokens);
  return prompt !== null && completion !== null ? prompt + completion : null;
}

/** Concatenates `choices[0].delta.content` and rebuilds the body a non-streamed call would give. */
function parseStream(bodyText: string): ParsedResponse {
  let content = "";
  let done = false;
  let finishReason: unknown = null;
  let usage: unknown;
  let id: unknown;
  let model: unknown;
  let created: unknown;
  for (const event of parseSse(bodyText)) {
    if (event.data.trim() === "[DONE]") {
      done = true;
      break;
    }
    const parsed = parseJson(event.data);
    if (!parsed.ok) return parseError(`stream chunk is not JSON (${excerpt(event.data, 80)})`, parsed.message);
    const chunk = parsed.value;
    if (!isRecord(chunk)) return protocolError("stream chunk is not a JSON object");
    const upstreamError = errorMessageOf(chunk);
    if (upstreamError !== null) return protocolError(`error in the stream: ${upstreamError}`);
    id ??= chunk.id;
    model ??= chunk.model;
    created ??= chunk.created;
    if (isRecord(chunk.usage)) usage = chunk.usage;
    const choice = firstChoice(chunk.choices);
    if (choice === null) continue;
    if (isRecord(choice.delta)) {
      const delta = textOf(choice.delta.content);
      if (delta === undefined) return protocolError("choices[0].delta.content is not text");
      content += delta;
    }
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
      finishReason = choice.finish_reason;
    }
  }
  // Some servers omit [DONE] but send a finish_reason; with neither, the stream was cut.
  if (!done && finishReason === null) {
    return protocolError(`stream ended before [DONE] after ${content.length} characters`);
  }
  const json: Record<string, unknown> = {
    id: id ?? null,
    object: "chat.completion",
    created: created ?? null,
    model: model ?? null,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finishReason }],
  };
  if (usage !== undefined) json.usage = usage;
  return {
    ok: true,
    content,
    json,
    tokens: tokensOf(usage),
    usage: usageOf(usage),
    finishReason: stringOrNull(finishReason),
    id: stringOrNull(id),
  };
}
