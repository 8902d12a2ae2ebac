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

// Byte patterns the stream check looks for. JSON escapes quotes inside strings, so a quote-led
// key like `"finish_reason":` in the raw bytes is always structure, never text the model wrote.
// "[DONE]" in a model's text would sit inside a JSON string, never right after `data:`.
const DONE = Buffer.from("data: [DONE]");
const DONE_TIGHT = Buffer.from("data:[DONE]");
const CONTENT = Buffer.from('"content":');
const TEXT = Buffer.from('"text":');
const TOOL_CALLS = Buffer.from('"tool_calls":');
const FINISH = Buffer.from('"finish_reason":');
const ERROR = Buffer.from('"error":');
const USAGE = Buffer.from('"usage":');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;

const skipSpaces = (b: Buffer, i: number, end: number) => {
  while (i < end && (b[i] === 0x20 || b[i] === 0x09)) i++;
  return i;
};

/**
 * An event stream, chunk by chunk. It scans the bytes of complete lines for a few JSON keys
 * (no decoding, no JSON.parse: that cost twice the CPU of proxying the stream), so it never holds
 * more than a partial line; `end(complete)` says how the stream ended.
 */
export class StreamCheck {
  private readonly tally = new Tally();
  private partial: Buffer | null = null;
  private done = false;
  private gaveUp = false;

  constructor(private readonly opts: AnswerCheckOptions) {}

  push(chunk: Buffer): void {
    if (this.gaveUp) return;
    const b = this.partial === null ? chunk : Buffer.concat([this.partial, chunk]);
    const last = b.lastIndexOf(NEWLINE);
    if (last === -1) {
      this.keep(b, 0);
      return;
    }
    this.scan(b, 0, last);
    if (last + 1 < b.length) this.keep(b, last + 1);
    else this.partial = null;
  }

  private keep(b: Buffer, from: number): void {
    if (b.length - from > MAX_KEPT) {
      this.gaveUp = true;
      this.partial = null;
      return;
    }
    // A copy: the chunk's memory belongs to the HTTP client.
    this.partial = Buffer.from(b.subarray(from));
  }

  /**
   * Complete lines in [from, end): one native search per key over the whole region (a search per
   * line would rescan the rest of the chunk for every line of it).
   */
  private scan(b: Buffer, from: number, end: number): void {
    const t = this.tally;
    const done = b.indexOf(DONE, from);
    if (done !== -1 && done < end) this.done = true;
    else {
      const tight = b.indexOf(DONE_TIGHT, from);
      if (tight !== -1 && tight < end) this.done = true;
    }
    t.chars += this.strings(b, CONTENT, from, end);
    if (this.opts.kind === "text") t.chars += this.strings(b, TEXT, from, end);
    if (!t.toolCalls) {
      for (let i = b.indexOf(TOOL_CALLS, from); i !== -1 && i < end; i = b.indexOf(TOOL_CALLS, i + 1)) {
        const v = skipSpaces(b, i + TOOL_CALLS.length, end);
        if (b[v] === 0x5b /* [ */ && b[skipSpaces(b, v + 1, end)] !== 0x5d /* ] */) t.toolCalls = true;
      }
    }
    for (let i = b.indexOf(FINISH, from); i !== -1 && i < end; i = b.indexOf(FINISH, i + 1)) {
      const v = skipSpaces(b, i + FINISH.length, end);
      if (b[v] === QUOTE) {
        const close = b.indexOf(QUOTE, v + 1);
        if (close !== -1 && close < end) t.finish = b.toString("latin1", v + 1, close);
      }
    }
    if (!t.error) {
      for (let i = b.indexOf(ERROR, from); i !== -1 && i < end; i = b.indexOf(ERROR, i + 1)) {
        if (b[skipSpaces(b, i + ERROR.length, end)] !== 0x6e /* null */) t.error = true;
      }
    }
    for (let i = b.indexOf(USAGE, from); i !== -1 && i < end; i = b.indexOf(USAGE, i + 1)) {
      const text = b.toString("latin1", i, Math.min(end, i + 400));
      const prompt = /"prompt_tokens":\s*(\d+)/.exec(text);
      const completion = /"completion_tokens":\s*(\d+)/.exec(text);
      if (prompt) t.promptTokens = Number(prompt[1]);
      if (completion) t.completionTokens = Number(completion[1]);
    }
  }

  /** Characters of every string value of `key` in [from, end). */
  private strings(b: Buffer, key: Buffer, from: number, end: number): number {
    let n = 0;
    for (let i = b.indexOf(key, from); i !== -1 && i < end; i = b.indexOf(key, i + key.length)) {
      const v = skipSpaces(b, i + key.length, end);
      if (b[v] === QUOTE) n += stringChars(b, v + 1, end);
    }
    return n;
  }

  end(complete: boolean): AnswerVerdict {
    if (this.gaveUp) return { outcome: "ok", promptTokens: this.tally.promptTokens, completionTokens: 0 };
    if (this.partial !== null) {
      const b = this.partial;
      this.partial = null;
      this.scan(b, 0, b.length);
    }
    const ended = complete && (this.done || this.tally.finish !== null);
    return this.tally.verdict(this.opts, ended);
  }
}

/** Characters of a JSON string's raw bytes from `i` to its closing quote (UTF-8 continuation bytes and escapes not counted). */
function stringChars(b: Buffer, i: number, end: number): number {
  let n = 0;
  for (; i < end; i++) {
    const c = b[i] as number;
    if (c === QUOTE) return n;
    if (c === BACKSLASH) {
      i++; // the escaped character counts once (a \uXXXX escape counts its digits: a close enough estimate)
      n++;
    } else if ((c & 0xc0) !== 0x80) n++;
  }
  return n;
}
