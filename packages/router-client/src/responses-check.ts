// The in-band check of OpenAI Responses (docs/live-evidence.md): `masked_error` (an error object, not
// JSON, no `output`, `status: failed`), `cut` (`status: incomplete` — at the token limit only under the
// cut threshold unless the client asked for no more; a stream without `response.completed`), `empty`
// (no text and no tool call in `output`).
import { type AnswerCheckOptions, type AnswerVerdict, isRecord, MASKED, Tally } from "./answer-verdict";
import { keyStringChars, lastInteger, lineAround, SseScan, stringAt, valueEndsWith, valueIs } from "./sse-scan";

/** Items a model emits instead of text: `function_call`, `web_search_call`, `mcp_call`… */
const isToolCall = (type: string): boolean => type.endsWith("_call");

function addUsage(t: Tally, usage: unknown): void {
  if (!isRecord(usage)) return;
  if (typeof usage.input_tokens === "number") t.promptTokens = usage.input_tokens;
  if (typeof usage.output_tokens === "number") t.completionTokens = usage.output_tokens;
}

/** status incomplete: at the token limit is `length` (judged like chat); any other reason ended it early. */
function addIncomplete(t: Tally, reason: string | null): void {
  if (reason === "max_output_tokens") t.finish = "length";
  else t.cutShort = true;
}

/** A 2xx non-streamed Response object, parsed. */
export function checkResponsesJson(o: Record<string, unknown>, opts: AnswerCheckOptions): AnswerVerdict {
  const status = o.status;
  if ((o.error !== undefined && o.error !== null) || status === "failed" || status === "cancelled" || !Array.isArray(o.output)) {
    return MASKED;
  }
  const tally = new Tally();
  addUsage(tally, o.usage);
  // A background response answers at once with nothing in it yet: nothing to judge.
  if (status === "queued" || status === "in_progress") return { outcome: "ok", promptTokens: tally.promptTokens, completionTokens: 0 };
  for (const item of o.output) {
    if (!isRecord(item) || typeof item.type !== "string") continue;
    if (isToolCall(item.type)) tally.toolCalls = true;
    if (item.type !== "message" || !Array.isArray(item.content)) continue;
    for (const part of item.content) {
      if (isRecord(part) && part.type === "output_text" && typeof part.text === "string") tally.chars += part.text.length;
    }
  }
  if (status === "incomplete") addIncomplete(tally, isRecord(o.incomplete_details) ? (o.incomplete_details.reason as string | null) : null);
  return tally.verdict(opts, true);
}

const TYPE = Buffer.from('"type":');
const TEXT_DELTA = Buffer.from('"response.output_text.delta"');
const COMPLETED = Buffer.from('"response.completed"');
const INCOMPLETE = Buffer.from('"response.incomplete"');
const FAILED = Buffer.from('"response.failed"');
const ERROR = Buffer.from('"error"');
const CALL = Buffer.from('_call"');
const DELTA = Buffer.from('"delta":');
const TEXT = Buffer.from('"text":');
const REASON = Buffer.from('"reason":');
const INPUT = Buffer.from('"input_tokens":');
const OUTPUT = Buffer.from('"output_tokens":');

/** response.created … response.output_text.delta … response.completed, read as it passes. */
export class ResponsesStreamCheck extends SseScan {
  private readonly tally = new Tally();
  private ended = false;
  /** Text in the final Response object, for a relay that sends no deltas. */
  private finalChars = 0;

  constructor(private readonly opts: AnswerCheckOptions) {
    super();
  }

  protected scan(b: Buffer, from: number, end: number): void {
    const t = this.tally;
    // Event types compared as bytes, nothing decoded.
    for (let i = b.indexOf(TYPE, from); i !== -1 && i < end; i = b.indexOf(TYPE, i + TYPE.length)) {
      if (valueIs(b, TYPE, i, end, TEXT_DELTA)) {
        // Only this event's `delta` is answer text (function arguments and reasoning have deltas too).
        const [start, stop] = lineAround(b, i, from, end);
        t.chars += keyStringChars(b, DELTA, start, stop);
      } else if (valueIs(b, TYPE, i, end, COMPLETED) || valueIs(b, TYPE, i, end, INCOMPLETE)) {
        this.ended = true;
        const [start, stop] = lineAround(b, i, from, end);
        this.finalChars += keyStringChars(b, TEXT, start, stop);
        if (valueIs(b, TYPE, i, end, INCOMPLETE)) {
          const r = b.indexOf(REASON, start);
          addIncomplete(t, r !== -1 && r < stop ? stringAt(b, REASON, r, stop) : null);
        }
      } else if (valueIs(b, TYPE, i, end, FAILED) || valueIs(b, TYPE, i, end, ERROR)) t.error = true;
      else if (!t.toolCalls && valueEndsWith(b, TYPE, i, end, CALL)) t.toolCalls = true;
    }
    t.promptTokens = lastInteger(b, INPUT, from, end) ?? t.promptTokens;
    t.completionTokens = lastInteger(b, OUTPUT, from, end) ?? t.completionTokens;
  }

  end(complete: boolean): AnswerVerdict {
    const t = this.tally;
    if (this.gaveUp) return { outcome: "ok", promptTokens: t.promptTokens, completionTokens: 0 };
    this.flush();
    if (t.chars === 0) t.chars = this.finalChars;
    return t.verdict(this.opts, complete && this.ended);
  }
}
