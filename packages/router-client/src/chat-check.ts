// The in-band check of OpenAI chat completions, text completions and embeddings (docs/live-evidence.md):
// `empty` (no text and no tool calls), `masked_error` (an error object, not JSON, or no `choices`), `cut`
// (`finish_reason: length` under the cut threshold; a stream without a finish reason or `[DONE]`).
import { type AnswerCheckOptions, type AnswerVerdict, isRecord, MASKED, Tally } from "./answer-verdict";
import { keyStringChars, QUOTE, SseScan, skipSpaces } from "./sse-scan";

function addUsage(t: Tally, usage: unknown): void {
  if (!isRecord(usage)) return;
  if (typeof usage.prompt_tokens === "number") t.promptTokens = usage.prompt_tokens;
  if (typeof usage.completion_tokens === "number") t.completionTokens = usage.completion_tokens;
}

/** One choice: `message` (chat), `delta` (chat stream) or `text` (completions). */
function addChoice(t: Tally, choice: unknown): void {
  if (!isRecord(choice)) return;
  if (typeof choice.text === "string") t.chars += choice.text.length;
  const m = choice.message ?? choice.delta;
  if (isRecord(m)) {
    if (typeof m.content === "string") t.chars += m.content.length;
    else if (Array.isArray(m.content)) {
      for (const part of m.content) {
        const text = isRecord(part) ? part.text : undefined;
        if (typeof text === "string") t.chars += text.length;
      }
    }
    if ((Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || isRecord(m.function_call)) t.toolCalls = true;
  }
  if (typeof choice.finish_reason === "string") t.finish = choice.finish_reason;
}

/** A 2xx non-streamed chat, text or embeddings answer, parsed. */
export function checkChatJson(o: Record<string, unknown>, opts: AnswerCheckOptions): AnswerVerdict {
  const tally = new Tally();
  addUsage(tally, o.usage);
  if (o.error !== undefined && o.error !== null) tally.error = true;
  if (opts.kind === "embeddings") {
    if (tally.error || !Array.isArray(o.data)) return { ...MASKED, promptTokens: tally.promptTokens };
    return { outcome: o.data.length === 0 ? "empty" : "ok", promptTokens: tally.promptTokens, completionTokens: 0 };
  }
  if (!tally.error && !Array.isArray(o.choices)) tally.error = true;
  if (Array.isArray(o.choices)) for (const choice of o.choices) addChoice(tally, choice);
  return tally.verdict(opts, true);
}

// "[DONE]" in a model's text would sit inside a JSON string, never right after `data:`.
const DONE = Buffer.from("data: [DONE]");
const DONE_TIGHT = Buffer.from("data:[DONE]");
const CONTENT = Buffer.from('"content":');
const TEXT = Buffer.from('"text":');
const TOOL_CALLS = Buffer.from('"tool_calls":');
const FINISH = Buffer.from('"finish_reason":');
const ERROR = Buffer.from('"error":');
const USAGE = Buffer.from('"usage":');

/** A chat or text completions event stream (content characters, tool calls, the finish reason, `[DONE]`, usage). */
export class StreamCheck extends SseScan {
  private readonly tally = new Tally();
  private done = false;

  constructor(private readonly opts: AnswerCheckOptions) {
    super();
  }

  /**
   * Complete lines in [from, end): one native search per key over the whole region (a search per
   * line would rescan the rest of the chunk for every line of it).
   */
  protected scan(b: Buffer, from: number, end: number): void {
    const t = this.tally;
    const done = b.indexOf(DONE, from);
    if (done !== -1 && done < end) this.done = true;
    else {
      const tight = b.indexOf(DONE_TIGHT, from);
      if (tight !== -1 && tight < end) this.done = true;
    }
    t.chars += keyStringChars(b, CONTENT, from, end);
    if (this.opts.kind === "text") t.chars += keyStringChars(b, TEXT, from, end);
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

  end(complete: boolean): AnswerVerdict {
    if (this.gaveUp) return { outcome: "ok", promptTokens: this.tally.promptTokens, completionTokens: 0 };
    this.flush();
    const ended = complete && (this.done || this.tally.finish !== null);
    return this.tally.verdict(this.opts, ended);
  }
}
