// The in-band answer check (SPEC §9): how one upstream answer ended, read from the bytes as they
// pass to the client, never changing one. Streams are read incrementally (content characters,
// tool calls, the finish reason, `[DONE]`, usage), so nothing is buffered but a partial line.
import type { LiveOutcome } from "@linewatch/core";

export type AnswerKind = "chat" | "text" | "embeddings";

export interface AnswerCheckOptions {
  kind: AnswerKind;
  /** `finish_reason: "length"` under this many completion tokens is `cut`… */
  cutMinTokens: number;
  /** …unless the client asked for no more than that (`max_tokens`). */
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

/** What the client asked for as the most completion tokens, if anything. */
export function requestedMaxTokens(body: Record<string, unknown>): number | null {
  const v = body.max_completion_tokens ?? body.max_tokens;
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** The longest partial SSE line (or non-streamed body) kept for the check; beyond it the check gives up and says `ok`. */
const MAX_KEPT = 4 * 1024 * 1024;

/** Facts gathered from an answer's choices, streamed or not. */
class Tally {
  chars = 0;
  toolCalls = false;
  finish: string | null = null;
  error = false;
  promptTokens = 0;
  completionTokens = -1;

  addUsage(usage: unknown): void {
    if (typeof usage !== "object" || usage === null) return;
    const u = usage as { prompt_tokens?: unknown; completion_tokens?: unknown };
    if (typeof u.prompt_tokens === "number") this.promptTokens = u.prompt_tokens;
    if (typeof u.completion_tokens === "number") this.completionTokens = u.completion_tokens;
  }

  /** One choice: `message` (chat), `delta` (chat stream) or `text` (completions). */
  addChoice(choice: unknown): void {
    if (typeof choice !== "object" || choice === null) return;
    const c = choice as { message?: unknown; delta?: unknown; text?: unknown; finish_reason?: unknown };
    if (typeof c.text === "string") this.chars += c.text.length;
    const m = (c.message ?? c.delta) as { content?: unknown; tool_calls?: unknown; function_call?: unknown } | undefined;
    if (typeof m === "object" && m !== null) {
      if (typeof m.content === "string") this.chars += m.content.length;
      else if (Array.isArray(m.content)) {
        for (const part of m.content) {
          const t = (part as { text?: unknown } | null)?.text;
          if (typeof t === "string") this.chars += t.length;
        }
      }
      if ((Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || (typeof m.function_call === "object" && m.function_call !== null)) {
        this.toolCalls = true;
      }
    }
    if (typeof c.finish_reason === "string") this.finish = c.finish_reason;
  }

  verdict(opts: AnswerCheckOptions, ended: boolean): AnswerVerdict {
    const completion = this.completionTokens >= 0 ? this.completionTokens : Math.ceil(this.chars / 4);
    const tokens = { promptTokens: this.promptTokens, completionTokens: completion };
    if (this.error) return { outcome: "masked_error", ...tokens };
    if (!ended) return { outcome: "cut", ...tokens };
    const floor = opts.maxTokens === null ? opts.cutMinTokens : Math.min(opts.cutMinTokens, opts.maxTokens);
    if (this.finish === "length" && completion < floor) return { outcome: "cut", ...tokens };
    if (this.chars === 0 && !this.toolCalls) return { outcome: "empty", ...tokens };
    return { outcome: "ok", ...tokens };
  }
}

/** A 2xx non-streamed answer, whole. */
export function checkJsonAnswer(body: Buffer, opts: AnswerCheckOptions): AnswerVerdict {
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    // A 2xx that is not JSON (an HTML error page, a proxy's text) is an error dressed as success.
    return { outcome: "masked_error", promptTokens: 0, completionTokens: 0 };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { outcome: "masked_error", promptTokens: 0, completionTokens: 0 };
  const tally = new Tally();
  const o = value as { error?: unknown; choices?: unknown; data?: unknown; usage?: unknown };
  tally.addUsage(o.usage);
  if (o.error !== undefined && o.error !== null) tally.error = true;
  if (opts.kind === "embeddings") {
    if (tally.error || !Array.isArray(o.data)) return { outcome: "masked_error", promptTokens: tally.promptTokens, completionTokens: 0 };
    return { outcome: o.data.length === 0 ? "empty" : "ok", promptTokens: tally.promptTokens, completionTokens: 0 };
  }
  if (!tally.error && !Array.isArray(o.choices)) tally.error = true;
  if (Array.isArray(o.choices)) for (const choice of o.choices) tally.addChoice(choice);
  return tally.verdict(opts, true);
}

/**
 * An event stream, chunk by chunk. `push` never throws and never holds more than a partial line;
 * `end(complete)` says how it ended (`complete`: the upstream closed it normally).
 */
export class StreamCheck {
  private readonly tally = new Tally();
  private readonly decoder = new TextDecoder();
  private partial = "";
  private done = false;
  private gaveUp = false;

  constructor(private readonly opts: AnswerCheckOptions) {}

  push(chunk: Uint8Array): void {
    if (this.gaveUp) return;
    const text = this.partial + this.decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = text.indexOf("\n", start); nl !== -1; nl = text.indexOf("\n", start)) {
      this.line(text, start, nl);
      start = nl + 1;
    }
    this.partial = start === 0 ? text : text.slice(start);
    if (this.partial.length > MAX_KEPT) {
      this.gaveUp = true;
      this.partial = "";
    }
  }

  private line(text: string, start: number, end: number): void {
    // Only `data:` lines matter; comments, `event:` and `id:` lines are skipped unread.
    if (!text.startsWith("data:", start)) return;
    const payload = text.slice(start + 5, end).trim();
    if (payload === "[DONE]") {
      this.done = true;
      return;
    }
    if (payload === "") return;
    let event: unknown;
    try {
      event = JSON.parse(payload);
    } catch {
      // A data line that is not JSON: the client's parser will choke on it too.
      this.tally.error = true;
      return;
    }
    if (typeof event !== "object" || event === null) return;
    const e = event as { error?: unknown; choices?: unknown; usage?: unknown };
    if (e.error !== undefined && e.error !== null) this.tally.error = true;
    if (Array.isArray(e.choices)) for (const choice of e.choices) this.tally.addChoice(choice);
    if (e.usage !== undefined) this.tally.addUsage(e.usage);
  }

  end(complete: boolean): AnswerVerdict {
    if (this.gaveUp) return { outcome: "ok", promptTokens: this.tally.promptTokens, completionTokens: 0 };
    if (this.partial !== "") {
      const text = this.partial;
      this.partial = "";
      this.line(text, 0, text.length);
    }
    const ended = complete && (this.done || this.tally.finish !== null);
    return this.tally.verdict(this.opts, ended);
  }
}
