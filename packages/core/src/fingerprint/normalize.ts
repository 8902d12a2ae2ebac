// A fingerprint answer as one short class: "7", "owl", "b", "hthtthhtht". Models at temperature 0
// say the same thing in the same words, but a substitute may wrap it ("I'd pick 7."), so the class
// keeps what the prompt asked for and drops the wrapping (docs/scoring.md#what-a-relay-can-fake).
import { answerTokens, normalizeAnswer } from "../scoring/text";

export const FINGERPRINT_FORMS = ["number", "choice", "word", "letters"] as const;
/**
 * What a fingerprint answer is: `number` (a number "at random"), `choice` (one of `options`),
 * `word` (one word, or a name of up to three words), `letters` (a string of letters, e.g. coin flips).
 */
export type FingerprintForm = (typeof FINGERPRINT_FORMS)[number];

/** `expect.fingerprint` of a sample: the sample is a fingerprint sample. */
export interface FingerprintExpect {
  form: FingerprintForm;
  /** `choice`: the options the prompt lists. */
  options?: string[];
}

/** An answer longer than this (or of more words than its form allows) is the class LONG_ANSWER. */
export const FINGERPRINT_MAX_CHARS = 120;
/** A word answer has at most this many words ("Open AI", "Marie Curie"). */
export const WORD_ANSWER_TOKENS = 3;
/** A class is cut to this many characters (it is stored, per answer, with health). */
export const CLASS_MAX_CHARS = 40;
/** Not a short answer: a sentence, a paragraph, a refusal. A class of its own, so a chatty substitute is a change. */
export const LONG_ANSWER = "<long>";
/** Nothing of the asked form in the answer (no number in a number answer, no option in a choice). */
export const NO_ANSWER = "<none>";

const NUMBER_WORDS: Record<string, string> = {
  zero: "0",
  one: "1",
  two: "2",
  three: "3",
  four: "4",
  five: "5",
  six: "6",
  seven: "7",
  eight: "8",
  nine: "9",
  ten: "10",
  eleven: "11",
  twelve: "12",
  thirteen: "13",
  fourteen: "14",
  fifteen: "15",
  sixteen: "16",
  seventeen: "17",
  eighteen: "18",
  nineteen: "19",
  twenty: "20",
};

/** The answer's class for its form. Pure; the same text always gives the same class. */
export function normalizeFingerprintAnswer(content: string, spec: FingerprintExpect): string {
  const text = content.trim();
  if (text === "") return NO_ANSWER;
  if ([...text].length > FINGERPRINT_MAX_CHARS) return LONG_ANSWER;
  const tokens = answerTokens(text);
  switch (spec.form) {
    case "number":
      return numberClass(tokens);
    case "choice":
      return choiceClass(text, tokens, spec.options ?? []);
    case "word":
      if (tokens.length === 0) return NO_ANSWER;
      return tokens.length > WORD_ANSWER_TOKENS ? LONG_ANSWER : cut(tokens.join(""));
    case "letters": {
      if (tokens.length > WORD_ANSWER_TOKENS * 4) return LONG_ANSWER;
      const letters = text
        .normalize("NFKC")
        .toLowerCase()
        .replace(/[^\p{L}]/gu, "");
      return letters === "" ? NO_ANSWER : cut(letters);
    }
  }
}

/** The first number of the answer ("I'd pick 7." → 7; "Seven" → 7); a sentence without one is LONG_ANSWER. */
function numberClass(tokens: string[]): string {
  for (const t of tokens) {
    if (/^-?\p{N}+$/u.test(t)) return cut(String(Number(t.normalize("NFKC"))));
    const word = NUMBER_WORDS[t];
    if (word !== undefined) return word;
  }
  return tokens.length > WORD_ANSWER_TOKENS ? LONG_ANSWER : NO_ANSWER;
}

/**
 * The option the answer names: the whole answer ("B", "**Banana**."), else the one option whose
 * words appear in it (earliest first). A one-letter option counts only in an answer of a few words:
 * "a" is also an article.
 */
function choiceClass(text: string, tokens: string[], options: string[]): string {
  const whole = normalizeAnswer(text);
  const opts = options.map((o) => ({ key: normalizeAnswer(o), words: answerTokens(o) })).filter((o) => o.key !== "");
  for (const o of opts) if (o.key === whole) return cut(o.key);
  let best: { key: string; at: number } | null = null;
  for (const o of opts) {
    if (o.key.length === 1 && tokens.length > WORD_ANSWER_TOKENS) continue;
    const at = indexOfWords(tokens, o.words);
    if (at >= 0 && (best === null || at < best.at)) best = { key: o.key, at };
  }
  if (best) return cut(best.key);
  return tokens.length > WORD_ANSWER_TOKENS ? LONG_ANSWER : NO_ANSWER;
}

function indexOfWords(haystack: readonly string[], needle: readonly string[]): number {
  if (needle.length === 0) return -1;
  for (let i = 0; i + needle.length <= haystack.length; i++) if (needle.every((w, j) => haystack[i + j] === w)) return i;
  return -1;
}

const cut = (s: string): string => ([...s].length > CLASS_MAX_CHARS ? [...s].slice(0, CLASS_MAX_CHARS).join("") : s);
