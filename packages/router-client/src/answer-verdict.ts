// How one upstream answer ended, as the in-band check says it (docs/live-evidence.md): the facts each
// protocol's reader gathers, and the one rule that turns them into an outcome.
import type { LiveOutcome } from "@linewatch/core";

/**
 * What the answer is, by the path it answers: chat completions, text completions, embeddings,
 * Anthropic messages, Anthropic token counts, OpenAI Responses.
 */
export type AnswerKind = "chat" | "text" | "embeddings" | "anthropic" | "anthropic-count" | "responses";

export interface AnswerCheckOptions {
  kind: AnswerKind;
  /** An answer stopped at the token limit under this many completion tokens is `cut`… */
  cutMinTokens: number;
  /** …unless the client asked for no more than that (`max_tokens`, `max_output_tokens`). */
  maxTokens: number | null;
}

export interface AnswerVerdict {
  outcome: LiveOutcome;
  promptTokens: number;
  completionTokens: number;
}

export function outcomeOfStatus(status: number): LiveOutcome {
  if (status === 429) return "rate_limited";
  if (status >= 500) return "http_5xx";
  if (status >= 400) return "http_4xx";
  return "ok";
}

/** Facts gathered from an answer, streamed or not, in any protocol. */
export class Tally {
  chars = 0;
  toolCalls = false;
  /** Why it ended; `length` is the token limit in every protocol's words (`max_tokens`, `max_output_tokens`). */
  finish: string | null = null;
  /** A 2xx that is an error. */
  error = false;
  /** The answer says it ended early for another reason (a Responses `incomplete` not due to the token limit). */
  cutShort = false;
  promptTokens = 0;
  completionTokens = -1;

  verdict(opts: AnswerCheckOptions, ended: boolean): AnswerVerdict {
    const completion = this.completionTokens >= 0 ? this.completionTokens : Math.ceil(this.chars / 4);
    const tokens = { promptTokens: this.promptTokens, completionTokens: completion };
    if (this.error) return { outcome: "masked_error", ...tokens };
    if (!ended || this.cutShort) return { outcome: "cut", ...tokens };
    const floor = opts.maxTokens === null ? opts.cutMinTokens : Math.min(opts.cutMinTokens, opts.maxTokens);
    if (this.finish === "length" && completion < floor) return { outcome: "cut", ...tokens };
    if (this.chars === 0 && !this.toolCalls) return { outcome: "empty", ...tokens };
    return { outcome: "ok", ...tokens };
  }
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
export const MASKED: AnswerVerdict = Object.freeze({ outcome: "masked_error", promptTokens: 0, completionTokens: 0 });
