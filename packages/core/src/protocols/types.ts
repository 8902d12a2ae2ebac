import type { Protocol } from "../types";

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

export type ParsedResponse =
  | {
      ok: true;
      /** The answer text. */
      content: string;
      /** The whole body; for a stream, the equivalent non-streamed body, so body paths work alike. */
      json: unknown;
      tokens: number | null;
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
