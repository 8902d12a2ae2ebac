// The paths the router proxies, each with the line protocol that serves it (docs/router.md): a request
// goes only to the route's lines that speak its protocol, and what the router says itself comes back in
// the error shape of the client's API.
import type { AnswerKind } from "@linewatch/router-client";

/** The shape of the router's own errors: OpenAI's `{"error": {…}}` or Anthropic's `{"type": "error", …}`. */
export type ErrorDialect = "openai" | "anthropic";

export interface Surface {
  /** After `/v1`. */
  readonly path: string;
  /** The line protocol that serves the path. */
  readonly protocol: "openai-chat" | "openai-responses" | "anthropic-messages";
  /** How the in-band check reads the answer. */
  readonly kind: AnswerKind;
  readonly dialect: ErrorDialect;
}

export const SURFACES: readonly Surface[] = Object.freeze([
  { path: "/chat/completions", protocol: "openai-chat", kind: "chat", dialect: "openai" },
  { path: "/completions", protocol: "openai-chat", kind: "text", dialect: "openai" },
  { path: "/embeddings", protocol: "openai-chat", kind: "embeddings", dialect: "openai" },
  { path: "/responses", protocol: "openai-responses", kind: "responses", dialect: "openai" },
  { path: "/messages", protocol: "anthropic-messages", kind: "anthropic", dialect: "anthropic" },
  { path: "/messages/count_tokens", protocol: "anthropic-messages", kind: "anthropic-count", dialect: "anthropic" },
]);

/** The API a path belongs to, for errors on paths the router does not proxy (a 404, a 500). */
export const dialectOfPath = (path: string): ErrorDialect => (path.startsWith("/v1/messages") ? "anthropic" : "openai");

/** How each protocol is named in the router's errors. */
export const PROTOCOL_NAMES: Record<Surface["protocol"], string> = {
  "openai-chat": "the OpenAI chat completions API (openai-chat)",
  "openai-responses": "the OpenAI Responses API (openai-responses)",
  "anthropic-messages": "the Anthropic Messages API (anthropic-messages)",
};
