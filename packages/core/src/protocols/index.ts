import type { Protocol } from "../types";
import { anthropicMessagesAdapter } from "./anthropic-messages";
import { genericHttpAdapter } from "./generic-http";
import { openAiChatAdapter } from "./openai-chat";
import type { ProtocolAdapter } from "./types";

export { ANTHROPIC_VERSION, anthropicMessagesAdapter } from "./anthropic-messages";
export { genericHttpAdapter } from "./generic-http";
export { openAiChatAdapter } from "./openai-chat";
export { looksLikeSse, parseSse, type SseEvent } from "./sse";
export type {
  BuildProbeOptions,
  ParsedResponse,
  ParseOptions,
  ProbeHttpRequest,
  ProbeTarget,
  ProtocolAdapter,
} from "./types";

export const adapters: Readonly<Record<Protocol, ProtocolAdapter>> = Object.freeze({
  "openai-chat": openAiChatAdapter,
  "anthropic-messages": anthropicMessagesAdapter,
  "generic-http": genericHttpAdapter,
});

export function getAdapter(protocol: Protocol): ProtocolAdapter {
  return adapters[protocol];
}
