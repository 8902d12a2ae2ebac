// The in-band check of Anthropic Messages (docs/live-evidence.md): `empty` (no text and no `tool_use`
// block), `masked_error` (a 2xx whose body is `{"type": "error"}` or has no `content`), `cut`
// (`stop_reason: max_tokens` under the cut threshold unless the client asked for no more; a stream
// without `message_stop`; an `error` event inside a 200 stream, e.g. `overloaded_error`).
import { type AnswerCheckOptions, type AnswerVerdict, isRecord, MASKED, Tally } from "./answer-verdict";
import { keyStringChars, lastInteger, QUOTE, SseScan, skipSpaces, stringAt, valueEndsWith, valueIs } from "./sse-scan";

/** The protocol's stop at the token limit, in the words every check uses. */
const finishOf = (stopReason: string): string => (stopReason === "max_tokens" ? "length" : stopReason);
const isToolUse = (type: string): boolean => type.endsWith("tool_use");

/** `input_tokens` counts neither cache reads nor writes: the prompt is all three. */
function addUsage(t: Tally, usage: unknown): void {
  if (!isRecord(usage)) return;
  let prompt = 0;
  for (const k of ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]) {
    const n = usage[k];
    if (typeof n === "number") prompt += n;
  }
  t.promptTokens = prompt;
  if (typeof usage.output_tokens === "number") t.completionTokens = usage.output_tokens;
}

/** A 2xx non-streamed message, parsed. */
export function checkAnthropicJson(o: Record<string, unknown>, opts: AnswerCheckOptions): AnswerVerdict {
  if (o.type === "error" || (o.error !== undefined && o.error !== null) || !Array.isArray(o.content)) return MASKED;
  const tally = new Tally();
  addUsage(tally, o.usage);
  for (const block of o.content) {
    if (!isRecord(block) || typeof block.type !== "string") continue;
    if (block.type === "text" && typeof block.text === "string") tally.chars += block.text.length;
    else if (isToolUse(block.type)) tally.toolCalls = true;
  }
  if (typeof o.stop_reason === "string") tally.finish = finishOf(o.stop_reason);
  return tally.verdict(opts, true);
}

/** `POST /v1/messages/count_tokens`: `{"input_tokens": N}`, or it is an error in disguise. */
export function checkAnthropicCount(o: Record<string, unknown>): AnswerVerdict {
  if (typeof o.input_tokens !== "number" || o.type === "error") return MASKED;
  return { outcome: "ok", promptTokens: o.input_tokens, completionTokens: 0 };
}

const TYPE = Buffer.from('"type":');
const MESSAGE_STOP = Buffer.from('"message_stop"');
const ERROR = Buffer.from('"error"');
const TOOL_USE = Buffer.from('tool_use"');
const TEXT = Buffer.from('"text":');
const STOP_REASON = Buffer.from('"stop_reason":');
const USAGE = Buffer.from('"usage":');
const INPUT = Buffer.from('"input_tokens":');
const CACHE_WRITE = Buffer.from('"cache_creation_input_tokens":');
const CACHE_READ = Buffer.from('"cache_read_input_tokens":');
const OUTPUT = Buffer.from('"output_tokens":');

/** message_start … content_block_delta … message_delta … message_stop, read as it passes. */
export class AnthropicStreamCheck extends SseScan {
  private readonly tally = new Tally();
  private done = false;
  /** An `error` event came inside the 200 stream. */
  private errorEvent = false;
  private input: number | null = null;
  private cacheWrite = 0;
  private cacheRead = 0;

  constructor(private readonly opts: AnswerCheckOptions) {
    super();
  }

  protected scan(b: Buffer, from: number, end: number): void {
    const t = this.tally;
    // Every event has a "type" or two: dispatched on the value's first bytes, compared as bytes only
    // when they may match (message_stop, error, tool_use, server_tool_use), nothing decoded.
    for (let i = b.indexOf(TYPE, from); i !== -1 && i < end; i = b.indexOf(TYPE, i + TYPE.length)) {
      const v = skipSpaces(b, i + TYPE.length, end);
      if (b[v] !== QUOTE) continue;
      const c = b[v + 1];
      if (c === 0x6d /* m */) {
        if (valueIs(b, TYPE, i, end, MESSAGE_STOP)) this.done = true;
      } else if (c === 0x65 /* e */) {
        if (valueIs(b, TYPE, i, end, ERROR)) this.errorEvent = true;
      } else if ((c === 0x74 /* t */ && b[v + 2] === 0x6f) /* o */ || (c === 0x73 /* s */ && b[v + 2] === 0x65) /* e */) {
        if (!t.toolCalls && valueEndsWith(b, TYPE, i, end, TOOL_USE)) t.toolCalls = true;
      }
    }
    // Text deltas and text blocks; `"cited_text":` and `"partial_json":` are other keys.
    t.chars += keyStringChars(b, TEXT, from, end);
    for (let i = b.indexOf(STOP_REASON, from); i !== -1 && i < end; i = b.indexOf(STOP_REASON, i + STOP_REASON.length)) {
      const reason = stringAt(b, STOP_REASON, i, end);
      if (reason !== null) t.finish = finishOf(reason);
    }
    // message_start has the input (and output: 1); message_delta the output so far: the last one wins.
    for (let i = b.indexOf(USAGE, from); i !== -1 && i < end; i = b.indexOf(USAGE, i + USAGE.length)) {
      const stop = Math.min(end, i + 400);
      this.input = lastInteger(b, INPUT, i, stop) ?? this.input;
      this.cacheWrite = lastInteger(b, CACHE_WRITE, i, stop) ?? this.cacheWrite;
      this.cacheRead = lastInteger(b, CACHE_READ, i, stop) ?? this.cacheRead;
      t.completionTokens = lastInteger(b, OUTPUT, i, stop) ?? t.completionTokens;
    }
  }

  end(complete: boolean): AnswerVerdict {
    const t = this.tally;
    if (!this.gaveUp) this.flush();
    t.promptTokens = (this.input ?? 0) + this.cacheWrite + this.cacheRead;
    if (this.gaveUp) return { outcome: "ok", promptTokens: t.promptTokens, completionTokens: 0 };
    // An overloaded or failing upstream ends the stream with an error event: the answer was cut off.
    if (this.errorEvent) return { ...t.verdict(this.opts, true), outcome: "cut" };
    return t.verdict(this.opts, complete && this.done);
  }
}
