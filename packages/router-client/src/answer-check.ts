// The in-band answer check (docs/live-evidence.md): how one upstream answer ended, read from the bytes
// as they pass to the client, never changing one. Each protocol has its own reader (chat-check.ts,
// anthropic-check.ts, responses-check.ts); streams are read incrementally, so nothing is buffered but a
// partial line.

import { type AnswerCheckOptions, type AnswerKind, type AnswerVerdict, isRecord, MASKED } from "./answer-verdict";
import { AnthropicStreamCheck, checkAnthropicCount, checkAnthropicJson } from "./anthropic-check";
import { checkChatJson, StreamCheck } from "./chat-check";
import { checkResponsesJson, ResponsesStreamCheck } from "./responses-check";
import type { SseScan } from "./sse-scan";

export { type AnswerCheckOptions, type AnswerKind, type AnswerVerdict, outcomeOfStatus } from "./answer-verdict";
export { AnthropicStreamCheck } from "./anthropic-check";
export { StreamCheck } from "./chat-check";
export { ResponsesStreamCheck } from "./responses-check";
export type { SseScan } from "./sse-scan";

/** What the client asked for as the most completion tokens, if anything, in its protocol's field. */
export function requestedMaxTokens(body: Record<string, unknown>, kind: AnswerKind = "chat"): number | null {
  const v =
    kind === "responses"
      ? body.max_output_tokens
      : kind === "anthropic"
        ? body.max_tokens
        : (body.max_completion_tokens ?? body.max_tokens);
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** A 2xx non-streamed answer, whole. */
export function checkJsonAnswer(body: Buffer, opts: AnswerCheckOptions): AnswerVerdict {
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    // A 2xx that is not JSON (an HTML error page, a proxy's text) is an error dressed as success.
    return MASKED;
  }
  if (!isRecord(value)) return MASKED;
  switch (opts.kind) {
    case "anthropic":
      return checkAnthropicJson(value, opts);
    case "anthropic-count":
      return checkAnthropicCount(value);
    case "responses":
      return checkResponsesJson(value, opts);
    default:
      return checkChatJson(value, opts);
  }
}

/** The stream reader for the answer's protocol. */
export function streamCheckFor(opts: AnswerCheckOptions): SseScan {
  if (opts.kind === "anthropic") return new AnthropicStreamCheck(opts);
  if (opts.kind === "responses") return new ResponsesStreamCheck(opts);
  return new StreamCheck(opts);
}
