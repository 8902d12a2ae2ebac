// One simulated upstream line: its options, its current mode and the state a mode needs
// (a request counter for the seeded choices, the flaky phase, the cache `stale` replays).

import { fnv1a32, mulberry32 } from "@linewatch/core";
import { type Answer, composeAnswer } from "./answers";
import { dropJsonFields, truncateText } from "./content-faults";
import { fingerprintAsk, fingerprintText, servingModel } from "./fingerprints";
import { completionTokens } from "./models";
import { type FaultSetting, type LabMode, type ModeRequest, type ModeSetting, parseModeRequest } from "./modes";
import { hexFrom, rngFor, seedToNumber } from "./prng";
import { cacheKey, type PromptView, recognise } from "./prompt";

export const ENDPOINTS = [
  "chat.completions",
  "completions",
  "embeddings",
  "models",
  "responses",
  "messages",
  "messages.count_tokens",
] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

/** A request as the line received it (the lab keeps the last few per line, for tests of what was sent). */
export interface RecordedRequest {
  method: string;
  /** After `/v1`. */
  path: string;
  /** Raw header pairs, as sent (name case kept). */
  headers: [string, string][];
  body: string;
}

const RECORDED = 32;

export interface LineOptions {
  /** Letters, digits, `.`, `_`, `-`; it is a path segment of the line's base URL. */
  name: string;
  /** Default: the name, so every line is deterministic and lines differ from each other. */
  seed?: number | string;
  /** When set, `/v1/*` requires `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Default `ok`. */
  mode?: LabMode | ModeRequest;
  /** Added to every answer; default 0. */
  baseLatencyMs?: number;
  /** Up to this much more, chosen by the seed per request; default 0. */
  latencyJitterMs?: number;
  /** Listed by `GET /v1/models` and used when a request names no model; default `lab-model`. */
  model?: string;
  /** Pause between SSE chunks; default 0 (all chunks in one write). */
  streamChunkDelayMs?: number;
}

export interface LineStats {
  name: string;
  mode: LabMode;
  /** The mode with every parameter resolved. */
  setting: ModeSetting;
  /** Requests received on `/v1/*`, answered or not. */
  requests: number;
  byEndpoint: Record<Endpoint, number>;
  /** Answers sent, by HTTP status. */
  byStatus: Record<string, number>;
  /** Requests left hanging by `hang`. */
  hung: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** One generated answer, as a cache would keep it. */
export interface Reply {
  id: string;
  created: number;
  model: string;
  content: string;
  /** `length`: the answer stopped at the token limit (the `cut` mode's non-streamed answer). */
  finishReason: "stop" | "length";
  /** null when `drop-fields` removed it. */
  usage: Usage | null;
  /** The model called this tool (with `{}` as its input) instead of answering in text. */
  toolCall?: { id: string; name: string };
  /** Top-level fields the body carries beside the API's own (`shape-change`: another backend's). */
  extra?: Record<string, unknown>;
}

export type Plan =
  | { action: "hang" }
  | { action: "error"; delayMs: number; status: number; retryAfterSec: number | null }
  /** A 200 whose body is an error object (a quota or upstream error dressed as success). */
  | { action: "masked-error"; delayMs: number }
  | { action: "answer"; delayMs: number; fault: FaultSetting };

const LINE_NAME = /^[A-Za-z0-9._-]{1,128}$/;
/** Answer ids as each API shapes them. */
const ID_PREFIX: Record<Endpoint, string> = {
  "chat.completions": "chatcmpl-",
  completions: "cmpl-",
  embeddings: "emb-",
  models: "model-",
  responses: "resp_",
  messages: "msg_",
  "messages.count_tokens": "count_",
};
const CACHE_LIMIT = 64;

export class LabError extends Error {
  override name = "LabError";
}

export function resolveMode(mode: LabMode | ModeRequest | undefined): ModeSetting {
  const parsed = parseModeRequest(typeof mode === "string" ? { mode } : (mode ?? { mode: "ok" }));
  if (!parsed.ok) throw new LabError(parsed.error);
  return parsed.value;
}

export class VirtualLine {
  readonly name: string;
  readonly apiKey: string | null;
  readonly model: string;
  readonly streamChunkDelayMs: number;
  private readonly seed: number;
  private readonly baseLatencyMs: number;
  private readonly latencyJitterMs: number;
  private setting: ModeSetting;
  private seq = 0;
  /** Requests since the mode was last set: the flaky phase. */
  private sinceModeSet = 0;
  /** The last reply per prompt (what `stale` replays) and the content composed before any fault. */
  private readonly cache = new Map<string, { reply: Reply; composed: string }>();
  private readonly recorded: RecordedRequest[] = [];
  private readonly counters = {
    requests: 0,
    byEndpoint: Object.fromEntries(ENDPOINTS.map((e) => [e, 0])) as Record<Endpoint, number>,
    byStatus: {} as Record<string, number>,
    hung: 0,
  };

  constructor(options: LineOptions) {
    if (!LINE_NAME.test(options.name)) {
      throw new LabError(`line name must match ${LINE_NAME}; got ${JSON.stringify(options.name)}`);
    }
    this.name = options.name;
    this.seed = seedToNumber(options.seed ?? options.name);
    this.apiKey = options.apiKey ?? null;
    this.model = options.model ?? "lab-model";
    this.baseLatencyMs = nonNegative(options.baseLatencyMs, "baseLatencyMs");
    this.latencyJitterMs = nonNegative(options.latencyJitterMs, "latencyJitterMs");
    this.streamChunkDelayMs = nonNegative(options.streamChunkDelayMs, "streamChunkDelayMs");
    this.setting = resolveMode(options.mode);
  }

  setMode(setting: ModeSetting): void {
    this.setting = setting;
    this.sinceModeSet = 0;
  }

  stats(): LineStats {
    const { requests, byEndpoint, byStatus, hung } = this.counters;
    return {
      name: this.name,
      mode: this.setting.mode,
      setting: this.setting,
      requests,
      byEndpoint: { ...byEndpoint },
      byStatus: { ...byStatus },
      hung,
    };
  }

  /** Counts the request and gives it its sequence number, the key of every seeded choice. */
  arrive(endpoint: Endpoint): number {
    this.counters.requests += 1;
    this.counters.byEndpoint[endpoint] += 1;
    return this.seq++;
  }

  record(request: RecordedRequest): void {
    this.recorded.push(request);
    if (this.recorded.length > RECORDED) this.recorded.shift();
  }

  /** The last requests received, oldest first. */
  requests(): RecordedRequest[] {
    return this.recorded.map((r) => ({ ...r, headers: r.headers.map(([k, v]) => [k, v] as [string, string]) }));
  }

  answered(status: number): void {
    this.counters.byStatus[status] = (this.counters.byStatus[status] ?? 0) + 1;
  }

  hung(): void {
    this.counters.hung += 1;
  }

  /** What happens to request `seq` (of a prompt this long): flaky picks its phase, rates roll the seeded dice. */
  plan(seq: number, promptChars = 0): Plan {
    let fault: FaultSetting;
    if (this.setting.mode === "flaky") {
      fault = this.sinceModeSet % 2 === 0 ? { mode: "ok" } : this.setting.fault;
    } else {
      fault = this.setting;
    }
    this.sinceModeSet += 1;
    const jitter = this.latencyJitterMs > 0 ? Math.floor(rngFor(this.seed, seq, "latency")() * (this.latencyJitterMs + 1)) : 0;
    let delayMs = this.baseLatencyMs + jitter;
    switch (fault.mode) {
      case "hang":
        return { action: "hang" };
      case "slow":
        delayMs += fault.latencyMs;
        return { action: "answer", delayMs, fault: { mode: "ok" } };
      case "errors":
        if (fault.rate >= 1 || rngFor(this.seed, seq, "fault")() < fault.rate) {
          return { action: "error", delayMs, status: fault.status, retryAfterSec: null };
        }
        return { action: "answer", delayMs, fault: { mode: "ok" } };
      case "rate-limit":
        if (fault.rate >= 1 || rngFor(this.seed, seq, "fault")() < fault.rate) {
          return { action: "error", delayMs, status: 429, retryAfterSec: fault.retryAfterSec };
        }
        return { action: "answer", delayMs, fault: { mode: "ok" } };
      case "long-prompt":
        if (promptChars <= fault.minPromptChars) return { action: "answer", delayMs, fault: { mode: "ok" } };
        if (fault.answer === "masked-error") return { action: "masked-error", delayMs };
        return { action: "answer", delayMs, fault };
      default:
        return { action: "answer", delayMs, fault };
    }
  }

  /**
   * A chat or completion answer under a content fault (ok, truncate, drop-fields, stale, downgrade) or
   * a relay's (substitute, inflate-usage, shape-change, recognise-probes). `headers`: the request's,
   * which a relay that recognises probes looks at.
   */
  reply(
    endpoint: Endpoint,
    requestModel: string | null,
    view: PromptView,
    seq: number,
    fault: FaultSetting,
    now: number,
    headers: Readonly<Record<string, string>> = {},
  ): Reply {
    const model = requestModel ?? this.model;
    const key = cacheKey(endpoint, model, view);
    if (fault.mode === "stale") {
      const cached = this.cache.get(key);
      if (cached) return cached.reply;
    }
    const ask = view.toolName ? null : fingerprintAsk(view.user);
    const size = fault.mode === "downgrade" ? "small" : "full";
    let answer: Answer;
    // A bank prompt: the simulated model answers it at temperature 0, the same answer most of the time.
    const sim = ask ? servingModel(model, fault, { ...ask, headers }, rngFor(this.seed, seq, "relay")) : null;
    if (ask && sim) answer = { content: fingerprintText(sim, ask, rngFor(this.seed, seq, "fingerprint")), json: null };
    else {
      const kind = recognise(view);
      answer = composeAnswer(kind, view, size, rngFor(this.seed, seq, "content"));
      // A sampling model rarely says the same thing twice in a row; re-roll a repeat so that
      // `varies` never flags a healthy line (answers with one right form, like "155", stay).
      const previous = this.cache.get(key)?.composed;
      for (let attempt = 1; attempt <= 4 && answer.content === previous; attempt++) {
        answer = composeAnswer(kind, view, size, rngFor(this.seed, seq, `content:${attempt}`));
      }
    }
    const composed = answer.content;
    if (fault.mode === "truncate") answer = { content: truncateText(answer.content, fault.fraction), json: null };
    if (fault.mode === "long-prompt") answer = { content: "", json: null };
    if (fault.mode === "drop-fields" && answer.json) {
      const json = dropJsonFields(answer.json, fault.fields, rngFor(this.seed, seq, "fault"));
      answer = { content: JSON.stringify(json), json };
    }
    if (view.toolName) answer = { content: "", json: null };
    // A bank prompt is counted with its model's tokenizer; others at 4 characters a token.
    let inputTokens = sim ? Math.ceil(view.promptChars * sim.tokensPerChar) + sim.promptOverhead : Math.ceil(view.promptChars / 4);
    let outputTokens = view.toolName ? 12 : sim ? completionTokens(sim, answer.content) : Math.ceil(answer.content.length / 4);
    if (fault.mode === "inflate-usage") {
      inputTokens = Math.round(inputTokens * fault.factor);
      outputTokens = Math.round(outputTokens * fault.factor);
    }
    const idRng = rngFor(this.seed, seq, "id");
    const reply: Reply = {
      id: fault.mode === "shape-change" ? uuidFrom(idRng) : `${ID_PREFIX[endpoint]}${hexFrom(idRng, 24)}`,
      created: Math.floor(now / 1000),
      model,
      content: answer.content,
      finishReason: "stop",
      usage:
        fault.mode === "drop-fields"
          ? null
          : { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens },
      ...(view.toolName ? { toolCall: { id: hexFrom(rngFor(this.seed, seq, "tool"), 24), name: view.toolName } } : {}),
      ...(fault.mode === "shape-change" ? { extra: { provider: "upstream-b", x_request_id: hexFrom(idRng, 16) } } : {}),
    };
    this.remember(key, { reply, composed });
    return reply;
  }

  /** A unit vector from the seed and the text: the same input always embeds the same way. */
  embed(text: string, dimensions: number, fault: FaultSetting): number[] {
    const rng = mulberry32(this.seed ^ fnv1a32(text));
    const raw = Array.from({ length: dimensions }, () => rng() * 2 - 1);
    const norm = Math.sqrt(raw.reduce((sum, v) => sum + v * v, 0)) || 1;
    const vector = raw.map((v) => Math.round((v / norm) * 1e6) / 1e6);
    return fault.mode === "truncate" ? vector.slice(0, Math.round(vector.length * fault.fraction)) : vector;
  }

  private remember(key: string, entry: { reply: Reply; composed: string }): void {
    this.cache.delete(key);
    this.cache.set(key, entry);
    if (this.cache.size > CACHE_LIMIT) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }
}

/** A uuid-shaped id (8-4-4-4-12 hex digits), as some backends give answers. */
function uuidFrom(rng: () => number): string {
  const h = hexFrom(rng, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function nonNegative(value: number | undefined, field: string): number {
  if (value === undefined) return 0;
  if (!Number.isFinite(value) || value < 0) throw new LabError(`${field} must be a number ≥ 0; got ${value}`);
  return value;
}
