import type { Protocol } from "../types";
import { anthropicMessagesAdapter } from "./anthropic-messages";
import { genericHttpAdapter } from "./generic-http";
import { openAiChatAdapter } from "./openai-chat";
import type { ProtocolAdapter } from "./types";

export type {
  BuildProbeOptions,
  ParsedResponse,
  ParseOptions,
  ProbeHttpRequest,
  ProbeTarget,
  ProtocolAdapter,
} from "./types";
export { parseSse, looksLikeSse, type SseEvent } from "./sse";
export { openAiChatAdapter } from "./openai-chat";
export { anthropicMessagesAdapter, ANTHROPIC_VERSION } from "./anthropic-messages";
export { genericHttpAdapter } from "./generic-http";

export const adapters: Readonly<Record<Protocol, ProtocolAdapter>> = Object.freeze({
  "openai-chat": openAiChatAdapter,
  "anthropic-messages": anthropicMessagesAdapter,
  "generic-http": genericHttpAdapter,
});

export function getAdapter(protocol: Protocol): ProtocolAdapter {
  return adapters[protocol];
}
