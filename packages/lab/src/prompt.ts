// Reading a request the way a model would: what is asked, in what shape, with which nonce.
// Cheap string work only; this runs on every request of a throughput benchmark.

export interface PromptView {
  /** System messages, joined. */
  system: string;
  /** The last user message (or the completion prompt). */
  user: string;
  /** Every character of the prompt, for usage counts. */
  promptChars: number;
  /** The nonce-like token to echo, if any. */
  nonce: string | null;
  /** `response_format: {type: "json_object"}` was asked for. */
  jsonFormat: boolean;
  /** A tool of the request that the last user message names: the model calls it instead of answering. */
  toolName?: string | null;
}

/** The name of a tool (chat, Responses or Anthropic shape) that `user` mentions, if any. */
export function toolNamed(tools: unknown, user: string): string | null {
  if (!Array.isArray(tools)) return null;
  const text = user.toLowerCase();
  for (const tool of tools) {
    if (typeof tool !== "object" || tool === null) continue;
    const t = tool as { name?: unknown; function?: { name?: unknown } };
    const name = typeof t.name === "string" ? t.name : typeof t.function?.name === "string" ? t.function.name : null;
    if (name !== null && name !== "" && text.includes(name.toLowerCase())) return name;
  }
  return null;
}

export type JsonValueKind =
  | { type: "string" }
  | { type: "number" }
  | { type: "boolean" }
  | { type: "array"; count: number; of: "string" | "number" };
export interface JsonKey {
  name: string;
  kind: JsonValueKind;
}

export type AnswerKind =
  | { kind: "json"; keys: JsonKey[]; subject: string | null }
  | { kind: "minutes"; minutes: number }
  | { kind: "long"; targetChars: number }
  | { kind: "echo"; nonce: string }
  | { kind: "generic" };

interface MessageLike {
  role?: unknown;
  content?: unknown;
}

/** Message content may be a string or an array of `{type: "text", text}` parts. */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "",
      )
      .join("");
  }
  return "";
}

export function viewChat(messages: readonly unknown[], responseFormat: unknown): PromptView {
  let system = "";
  let user = "";
  let promptChars = 0;
  for (const raw of messages) {
    const message = (raw ?? {}) as MessageLike;
    const text = messageText(message.content);
    promptChars += text.length;
    if (message.role === "system" || message.role === "developer") system += (system ? "\n" : "") + text;
    else if (message.role === "user") user = text;
  }
  const jsonFormat =
    typeof responseFormat === "object" && responseFormat !== null && (responseFormat as { type?: unknown }).type === "json_object";
  return { system, user, promptChars, nonce: findNonce(user), jsonFormat };
}

/** Anthropic Messages: `system` (a string or text blocks) sits beside the messages. */
export function viewAnthropic(system: unknown, messages: readonly unknown[]): PromptView {
  const view = viewChat(messages, null);
  const top = messageText(system);
  if (top === "") return view;
  return { ...view, system: view.system ? `${top}\n${view.system}` : top, promptChars: view.promptChars + top.length };
}

/** OpenAI Responses: `instructions` is the system prompt; `input` a string or message items; JSON via `text.format`. */
export function viewResponses(instructions: unknown, input: string | readonly unknown[], text: unknown): PromptView {
  const messages = typeof input === "string" ? [{ role: "user", content: input }] : input;
  const format = typeof text === "object" && text !== null ? (text as { format?: { type?: unknown } }).format : undefined;
  const jsonFormat = format?.type === "json_object" || format?.type === "json_schema";
  const view = viewChat(messages, jsonFormat ? { type: "json_object" } : null);
  const top = typeof instructions === "string" ? instructions : "";
  if (top === "") return view;
  return { ...view, system: view.system ? `${top}\n${view.system}` : top, promptChars: view.promptChars + top.length };
}

export function viewCompletion(prompt: string): PromptView {
  return { system: "", user: prompt, promptChars: prompt.length, nonce: findNonce(prompt), jsonFormat: false };
}

const LW_TOKEN = /\blw-[A-Za-z0-9_-]+/;
const LABELLED_TOKEN = /\b(?:token|request id|nonce)\s*[:=#]\s*([A-Za-z0-9_-]{8,})/i;
const WORD = /[A-Za-z0-9_{}-]{8,}/g;
const TEMPLATE = "{{nonce}}";

/**
 * The prober fills `{{nonce}}` with tokens like `lw-3f9a2c7d1e`. Failing that, a token of
 * 8+ characters after "token:" / "Request id:", or the last word that looks random (letters
 * and digits mixed). An unfilled `{{nonce}}` is echoed as written.
 */
export function findNonce(text: string): string | null {
  const lw = LW_TOKEN.exec(text);
  if (lw) return lw[0];
  const labelled = LABELLED_TOKEN.exec(text);
  if (labelled?.[1]) return labelled[1];
  if (text.includes(TEMPLATE)) return TEMPLATE;
  let last: string | null = null;
  for (const match of text.matchAll(WORD)) {
    const word = match[0];
    if (/[0-9]/.test(word) && /[A-Za-z]/.test(word) && !word.includes("{")) last = word;
  }
  return last;
}

const NUMBER_WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};
const JSON_KEY = /"([A-Za-z_][A-Za-z0-9_]*)"(?:\s*\(([^)]*)\))?/g;

export function recognise(view: PromptView): AnswerKind {
  const { user, system } = view;
  if (view.jsonFormat || /\bjson\b/i.test(system) || /\bjson object\b/i.test(user)) {
    return { kind: "json", keys: jsonKeys(user), subject: subjectOf(user) };
  }
  if (/\bhow many minutes\b/i.test(user)) {
    const times = [...user.matchAll(/\b(\d{1,2}):(\d{2})\b/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
    if (times.length >= 2) {
      const minutes = ((times[1] as number) - (times[0] as number) + 1440) % 1440;
      return { kind: "minutes", minutes };
    }
  }
  const targetChars = targetLength(user);
  if (targetChars !== null) return { kind: "long", targetChars };
  if (view.nonce && /\b(repeat|echo)/i.test(user)) return { kind: "echo", nonce: view.nonce };
  return { kind: "generic" };
}

function jsonKeys(text: string): JsonKey[] {
  const keys: JsonKey[] = [];
  for (const match of text.matchAll(JSON_KEY)) {
    const name = match[1] as string;
    if (keys.some((k) => k.name === name)) continue;
    keys.push({ name, kind: valueKind((match[2] ?? "").toLowerCase()) });
  }
  return keys;
}

function valueKind(description: string): JsonValueKind {
  if (/\b(array|list)\b/.test(description)) {
    const countWord = /\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\b/.exec(description)?.[1];
    const count = countWord === undefined ? 3 : (NUMBER_WORDS[countWord] ?? Number(countWord));
    return { type: "array", count: Math.min(Math.max(count, 1), 20), of: /\bnumbers?\b/.test(description) ? "number" : "string" };
  }
  if (/\b(number|integer|int|float)\b/.test(description)) return { type: "number" };
  if (/\b(boolean|bool)\b/.test(description)) return { type: "boolean" };
  return { type: "string" };
}

function subjectOf(text: string): string | null {
  const match = /\b(?:city|town|country) of ([A-Z][\p{L}'-]*(?: [A-Z][\p{L}'-]*)*)/u.exec(text);
  return match?.[1] ?? null;
}

/** "around 600 characters" wins over "about 100 words" (≈ 6 characters a word). */
function targetLength(text: string): number | null {
  const chars = /(?:about|around|roughly|approximately|~)\s*(\d+)\s*(?:characters|chars)\b/i.exec(text);
  if (chars) return clampLength(Number(chars[1]));
  const words = /(?:about|around|roughly|approximately|~|in)\s*(\d+)\s*words\b/i.exec(text);
  if (words) return clampLength(Number(words[1]) * 6);
  return null;
}

function clampLength(n: number): number {
  return Math.min(Math.max(n, 40), 8000);
}

/** Nonces and timestamps change on every probe; a cache would still see the same question. */
export function cacheKey(endpoint: string, model: string, view: PromptView): string {
  let text = `${view.system}\n${view.user}`;
  if (view.nonce) text = text.split(view.nonce).join(TEMPLATE);
  text = text.replace(/\d{4}-\d{2}-\d{2}T[\d:.]+Z?/g, "{{now}}").replace(/\b\d{12,}\b/g, "{{now}}");
  return `${endpoint}\n${model}\n${text}`;
}
