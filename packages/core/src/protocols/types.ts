import type { Protocol } from "../types";
import type { ClientPlatform } from "./sdk-headers";

/** The part of a line an adapter needs to address it. The key is decrypted by the shell. */
export interface ProbeTarget {
  baseUrl: string;
  model: string;
  headers: Record<string, string>;
  apiKey: string | null;
}

export interface BuildProbeOptions {
  /** Ask the upstream to stream (SSE). Unset: the request decides. */
  stream?: boolean;
  /**
   * The machine the probe claims in the SDK's `x-stainless-*` headers, as the SDK would report this
   * process (the shell knows it; core cannot look). Default: DEFAULT_CLIENT_PLATFORM.
   */
  platform?: ClientPlatform;
}

/** Everything the shell needs for one fetch. Header names are lower-case; the body is serialised. */
export interface ProbeHttpRequest {
  url: string;
  method: "POST";
  headers: Record<string, string>;
  body: string;
}

export interface ParseOptions {
  /** generic-http only: the answer is the string at this path of the JSON body (e.g. `output.text`). */
  contentPath?: string;
}

/** Tokens an answer says it used, as the protocol names them; null where the answer does not say. */
export interface AnswerUsage {
  /** Prompt tokens: OpenAI `prompt_tokens` / `input_tokens`; Anthropic `input_tokens` plus cache reads and writes. */
  input: number | null;
  /** Completion tokens: `completion_tokens` / `output_tokens`. */
  output: number | null;
}

export type ParsedResponse =
  | {
      ok: true;
      /** The answer text. */
      content: string;
      /** The whole body; for a stream, the equivalent non-streamed body, so body paths work alike. */
      json: unknown;
      /** Input and output tokens together; null when the answer reports neither. */
      tokens: number | null;
      usage: AnswerUsage;
      /**
       * Why the answer ended, in the protocol's own words: chat `finish_reason` (`stop`, `length`…),
       * Anthropic `stop_reason` (`end_turn`, `max_tokens`…), Responses `completed` or the
       * `incomplete_details.reason` (`max_output_tokens`…); null when the answer does not say.
       */
      finishReason: string | null;
      /** The answer's own id (`chatcmpl-…`, `msg_…`, `resp_…`); null when it has none. */
      id: string | null;
    }
  | { ok: false; errorClass: "parse" | "protocol"; message: string };

/** One per protocol: how to build a probe request and read the answer out of the response. */
export interface ProtocolAdapter {
  readonly protocol: Protocol;
  buildProbe(target: ProbeTarget, filledRequest: Record<string, unknown>, opts?: BuildProbeOptions): ProbeHttpRequest;
  /**
   * A non-2xx status gives `{ok: false, errorClass: "protocol"}` with the upstream's error message;
   * the shell records such a probe as `http_status`.
   */
  parseResponse(status: number, bodyText: string, opts?: ParseOptions): ParsedResponse;
}
