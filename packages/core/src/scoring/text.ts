// Text helpers for scoring: lengths in characters, answer normalisation, JSON inside answers.
import { parseJson } from "../protocols/http";

/** Length in Unicode code points, so an emoji or a CJK character counts once. */
export function charLength(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

/** Numbers keep their digits together: "1,550" and "3.14" stay one token. */
function prepare(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/(?<=\p{N})[.,'’](?=\p{N})/gu, "");
}

/** Lower-case, without punctuation, symbols or whitespace: "  155. " → "155", "New York!" → "newyork". */
export function normalizeAnswer(text: string): string {
  return prepare(text).replace(/[\p{P}\p{S}\s]+/gu, "");
}

/** Words of an answer, split on whitespace and punctuation: "155-minute trip." → 155, minute, trip. */
export function answerTokens(text: string): string[] {
  return prepare(text)
    .split(/[\p{P}\p{S}\s]+/u)
    .filter((token) => token !== "");
}

/** `needle` as consecutive whole tokens of `haystack`. */
export function containsTokens(haystack: readonly string[], needle: readonly string[]): boolean {
  if (needle.length === 0 || needle.length > haystack.length) return false;
  for (let i = 0; i + needle.length <= haystack.length; i += 1) {
    if (needle.every((token, j) => haystack[i + j] === token)) return true;
  }
  return false;
}

export type AnswerJson = { ok: true; value: unknown } | { ok: false };

/**
 * The answer parsed as JSON. Models wrap JSON in ```json fences or a sentence of prose, so
 * failing a plain parse, try the first fenced block, then the outermost {…} or […].
 */
export function parseAnswerJson(content: string): AnswerJson {
  const candidates = [content.trim()];
  const fenced = /```[a-zA-Z]*[ \t]*\r?\n?([\s\S]*?)```/.exec(content);
  if (fenced?.[1] !== undefined) candidates.push(fenced[1].trim());
  const start = content.search(/[[{]/);
  const end = Math.max(content.lastIndexOf("}"), content.lastIndexOf("]"));
  if (start >= 0 && end > start) candidates.push(content.slice(start, end + 1));
  for (const candidate of candidates) {
    const parsed = candidate === "" ? null : parseJson(candidate);
    if (parsed?.ok) return { ok: true, value: parsed.value };
  }
  return { ok: false };
}

export function quote(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max)}…` : flat);
}
