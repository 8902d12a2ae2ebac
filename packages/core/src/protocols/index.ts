import type { Protocol } from "../types";
import { anthropicMessagesAdapter } from "./anthropic-messages";
import { genericHttpAdapter } from "./generic-http";
import { openAiChatAdapter } from "./openai-chat";
import { openAiResponsesAdapter } from "./openai-responses";
import type { ProtocolAdapter } from "./types";

export { anthropicMessagesAdapter } from "./anthropic-messages";
export { genericHttpAdapter } from "./generic-http";
export { openAiChatAdapter } from "./openai-chat";
export { openAiResponsesAdapter, responseText } from "./openai-responses";
export {
  ANTHROPIC_SDK,
  ANTHROPIC_VERSION,
  anthropicSdkFor,
  anthropicSdkHeaders,
  type ClientPlatform,
  DEFAULT_CLIENT_PLATFORM,
  OPENAI_SDK_VERSION,
  openAiSdkHeaders,
} from "./sdk-headers";
export { looksLikeSse, parseSse, type SseEvent } from "./sse";
export type {
  AnswerUsage,
  BuildProbeOptions,
  ParsedResponse,
  ParseOptions,
  ProbeHttpRequest,
  ProbeTarget,
  ProtocolAdapter,
} from "./types";

export const adapters: Readonly<Record<Protocol, ProtocolAdapter>> = Object.freeze({
  "openai-chat": openAiChatAdapter,
  "openai-responses": openAiResponsesAdapter,
  "anthropic-messages": anthropicMessagesAdapter,
  "generic-http": genericHttpAdapter,
});

export function getAdapter(protocol: Protocol): ProtocolAdapter {
  return adapters[protocol];
}
