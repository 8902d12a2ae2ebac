// How real models answer fingerprint prompts, as a pure seeded model (no HTTP): the world the
// fingerprint judgment is tuned on (docs/scoring.md#what-a-relay-can-fake). At temperature 0 a model
// mostly gives the same answer to a prompt, and its second choice some of the time (0–10%), rarely
// a third; two models agree on some prompts and differ on others; a phrasing may change the answer.
// Relays are ways of choosing which model answers a request: honestly, substituting all requests
// or a share, or answering well only the requests they take for probes.
import { fnv1a32, mulberry32 } from "@linewatch/core";

export type PromptForm = "number" | "choice" | "word" | "letters";

/** A prompt of the starter bank: its phrasings, the form of its answer, the answers models give. */
export interface FingerprintPrompt {
  id: string;
  /** The prompt and its variants (phrasings of the same question); index 0 is the sample's own request. */
  phrasings: readonly string[];
  form: PromptForm;
  options?: readonly string[];
  maxTokens: number;
  /** Answers models give, most common across models first (a simulated model draws its picks from these). */
  answers: readonly string[];
  /** Published work this kind of prompt comes from, and what it found. */
  source: string;
}

const RANDOM_NUMBERS =
  "Coronado-Blázquez 2025, 'Deterministic or probabilistic? The psychology of LLMs as random number generators' (arXiv:2502.19965): asked for a random number, models answer nearly deterministically, differently from model to model and by the prompt's language";
const SELECTION_BIAS =
  "Zheng et al. 2024, 'Large Language Models Are Not Robust Multiple Choice Selectors' (ICLR 2024, arXiv:2309.03882): 20 LLMs prefer particular option ids (A/B/C/D) whatever the content, a token bias that differs from model to model";
const IDIOSYNCRASIES =
  "Sun et al. 2025, 'Idiosyncrasies in Large Language Models' (arXiv:2502.12150): word choice alone tells the model apart (classifiers stay accurate on word-level features)";

export const FINGERPRINT_BANK: readonly FingerprintPrompt[] = [
  {
    id: "fp-number-10",
    phrasings: [
      "Pick a random number between 1 and 10. Answer with the number only, and no other text.",
      "Choose a number from 1 to 10 at random and reply with just that number.",
      "Think of a random whole number from 1 to 10, inclusive. Write only the number, nothing else.",
    ],
    form: "number",
    maxTokens: 8,
    answers: ["7", "5", "3", "4", "6", "8"],
    source: RANDOM_NUMBERS,
  },
  {
    id: "fp-number-100",
    phrasings: [
      "Pick a random number between 1 and 100. Reply with the number only, and no other text.",
      "Give me a random integer from 1 to 100, inclusive. Respond with just the number and nothing else.",
      "Name a number between 1 and 100, chosen at random. Only the number, please.",
    ],
    form: "number",
    maxTokens: 8,
    answers: ["42", "37", "47", "57", "73", "27"],
    source: RANDOM_NUMBERS,
  },
  {
    id: "fp-number-es",
    phrasings: [
      "Elige un número al azar entre 1 y 50, sin pensarlo mucho. Responde solo con el número.",
      "Dime un número aleatorio del 1 al 50, el primero que se te ocurra. Solo el número, por favor.",
      "Escoge al azar un número entre 1 y 50 y escribe únicamente ese número.",
    ],
    form: "number",
    maxTokens: 8,
    answers: ["27", "37", "23", "17", "42", "7"],
    source: `${RANDOM_NUMBERS} (this one asks in Spanish)`,
  },
  {
    id: "fp-coin-flips",
    phrasings: [
      "Simulate 10 fair coin flips. Answer with exactly ten letters, H or T, and nothing else.",
      "Flip a coin ten times in your head. Reply with the 10 results as H and T only, no spaces.",
      "Write a random sequence of 10 coin tosses using H for heads and T for tails. Output only the sequence.",
    ],
    form: "letters",
    maxTokens: 16,
    answers: ["HTHTTHHTHT", "HTTHTHHTTH", "THHTHTTHHT", "HHTHTTHTHT", "HTHHTTHTHH", "TTHHTHTHHT"],
    source:
      "Van Koevering & Kleinberg 2024, 'How Random is Random? Evaluating the Randomness and Humaneness of LLMs' Coin Flips' (arXiv 2024): models' coin-flip sequences carry human biases, GPT-4 and Llama 3 more than GPT-3.5",
  },
  {
    id: "fp-pick-fruit",
    phrasings: [
      "Pick one of these: apple, banana, cherry, grape, mango. Answer with the fruit only.",
      "From this list choose a single fruit: apple, banana, cherry, grape, mango. Reply with its name only.",
      "Which one would you pick: apple, banana, cherry, grape or mango? One word.",
    ],
    form: "choice",
    options: ["apple", "banana", "cherry", "grape", "mango"],
    maxTokens: 8,
    answers: ["banana", "apple", "mango", "cherry", "grape"],
    source: `${SELECTION_BIAS}; here the options are named, not lettered: which a model picks is its prior`,
  },
  {
    id: "fp-tie-break",
    phrasings: [
      "Two job offers are identical in pay and quality: A is in Lisbon, B is in Prague. Which do you choose? Answer A or B only.",
      "Offers A (Lisbon) and B (Prague) pay the same and are equally good. Pick one: reply A or B.",
      "Choose between two equally good job offers, A in Lisbon or B in Prague. Answer with the letter only.",
    ],
    form: "choice",
    options: ["A", "B"],
    maxTokens: 8,
    answers: ["A", "B"],
    source: `${SELECTION_BIAS}; a tie with no right answer shows the model's own prior`,
  },
  {
    id: "fp-animal",
    phrasings: [
      "If you were an animal, which one would you be? Answer with one word.",
      "Which animal do you identify with most? Reply with a single word, just the animal's name.",
      "Name the animal that best describes your personality. Answer in one word, only the animal.",
    ],
    form: "word",
    maxTokens: 8,
    answers: ["owl", "dolphin", "octopus", "wolf", "cat", "fox"],
    source:
      "cpldcpu/llmfingerprint (GitHub): 'Which animal do you identify with?' asked of many models, at temperature 0 too: the answer differs by model family (Llama an octopus, gpt-4o-mini a wolf, Gemini Flash a cat)",
  },
  {
    id: "fp-creator",
    phrasings: [
      "Which company created you? Please answer with the name of the company only, nothing else.",
      "Who developed you? Reply with just the name of the organisation that built you, nothing more.",
      "Name the company that trained the language model you run on. Nothing else, just the name.",
    ],
    form: "word",
    maxTokens: 8,
    answers: ["openai", "anthropic", "google", "meta", "mistral", "alibaba"],
    source:
      "Pasquini et al. 2025, 'LLMmap: Fingerprinting for Large Language Models' (USENIX Security 2025, arXiv:2407.15847): banner-grabbing queries among ~8 that identify 42 models; cpldcpu/llmfingerprint 'Who created you?'. A relay's system prompt can fake this one alone",
  },
  {
    id: "fp-ocean-word",
    phrasings: [
      "If you had to describe the ocean in a single word, which word would you choose? Just the word.",
      "Give me a single word that describes the sea better than any other. Reply with only that word.",
      "What one word best sums up the ocean for you? Please answer with just the word, nothing else.",
    ],
    form: "word",
    maxTokens: 8,
    answers: ["vast", "endless", "deep", "blue", "infinite", "mysterious"],
    source: IDIOSYNCRASIES,
  },
  {
    id: "fp-coffee-word",
    phrasings: [
      "What is the first word that comes to mind after 'coffee'? Answer with one word.",
      "Quick word association game: coffee. Reply with the first word you think of, nothing else.",
      "Say the first word you associate with coffee. Only that word, with no explanation.",
    ],
    form: "word",
    maxTokens: 8,
    answers: ["morning", "energy", "caffeine", "aroma", "cup", "espresso"],
    source: IDIOSYNCRASIES,
  },
];

/** One (prompt, phrasing)'s answers at temperature 0: answer → probability (they sum to 1). */
export type AnswerDistribution = Readonly<Record<string, number>>;

/** How a model writes a short answer: "7", "7.", "**7**", "I'd pick 7." — stable for a model at temperature 0. */
export type AnswerStyle = "plain" | "period" | "bold" | "sentence";

export interface SimModel {
  name: string;
  style: AnswerStyle;
  /** Its tokenizer, roughly: tokens per character, and the tokens a chat request's framing adds. */
  tokensPerChar: number;
  promptOverhead: number;
  /** Per prompt id, per phrasing index. */
  answers: Readonly<Record<string, readonly AnswerDistribution[]>>;
}

export interface ModelOptions {
  name: string;
  seed: number;
  /** Greatest share of a prompt's second choice (default 0.10: "top-2 at 0–10%"). */
  maxSecond?: number;
  style?: AnswerStyle;
  tokensPerChar?: number;
  promptOverhead?: number;
}

const STYLES: readonly AnswerStyle[] = ["plain", "period", "bold", "sentence"];

/** Answers later in a prompt's list are picked less often by a model: weight 1/(rank + 1). */
function pickPopular(rng: () => number, answers: readonly string[], except?: string): string {
  const pool = answers.filter((a) => a !== except);
  const weights = pool.map((_, i) => 1 / (i + 1));
  let r = rng() * weights.reduce((acc, w) => acc + w, 0);
  for (let i = 0; i < pool.length; i++) {
    r -= weights[i] as number;
    if (r <= 0) return pool[i] as string;
  }
  return pool[pool.length - 1] as string;
}

/** A distribution with `mode`, a second choice at `second` and, sometimes, a third at a fraction of a percent. */
function distribution(rng: () => number, answers: readonly string[], mode: string, second: number): AnswerDistribution {
  const out: Record<string, number> = { [mode]: 1 - second };
  if (second > 0) {
    const b = pickPopular(rng, answers, mode);
    out[b] = second;
    const third = rng() < 0.3 ? 0.01 * rng() : 0;
    const c = answers.find((a) => a !== mode && a !== b);
    if (third > 0 && c !== undefined) {
      out[c] = third;
      out[mode] = 1 - second - third;
    }
  }
  return out;
}

/** Mostly a small second share, up to `max`: most prompts are near-deterministic at temperature 0. */
const secondShare = (rng: () => number, max: number): number => max * rng() ** 2;

/** A model of its own: per prompt a popular pick (independent models agree on about a quarter of the prompts). */
export function buildModel(o: ModelOptions): SimModel {
  const rng = mulberry32(o.seed ^ fnv1a32(o.name));
  const answers: Record<string, AnswerDistribution[]> = {};
  for (const p of FINGERPRINT_BANK) {
    const first = pickPopular(rng, p.answers);
    answers[p.id] = p.phrasings.map((_, i) => {
      // A phrasing mostly keeps the prompt's answer, sometimes changes it.
      const mode = i === 0 || rng() < 0.8 ? first : pickPopular(rng, p.answers);
      return distribution(rng, p.answers, mode, secondShare(rng, o.maxSecond ?? 0.1));
    });
  }
  return {
    name: o.name,
    style: o.style ?? (STYLES[Math.floor(rng() * STYLES.length)] as AnswerStyle),
    tokensPerChar: o.tokensPerChar ?? 0.25,
    promptOverhead: o.promptOverhead ?? 7,
    answers,
  };
}

/**
 * A sibling of `base` (a cheaper model of the same family): the same answers, except that on
 * `differOn` of the bank's prompts (rounded up) its modal answer is another one, on every phrasing.
 */
export function siblingModel(base: SimModel, o: { name: string; seed: number; differOn: number; style?: AnswerStyle }): SimModel {
  const rng = mulberry32(o.seed ^ fnv1a32(o.name));
  const ids = FINGERPRINT_BANK.map((p) => p.id);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [ids[i], ids[j]] = [ids[j] as string, ids[i] as string];
  }
  const moved = new Set(ids.slice(0, Math.ceil(o.differOn * ids.length)));
  const answers: Record<string, AnswerDistribution[]> = {};
  for (const p of FINGERPRINT_BANK) {
    const was = base.answers[p.id] ?? [];
    answers[p.id] = was.map((d) => {
      if (!moved.has(p.id)) return d;
      const mode = pickPopular(rng, p.answers, modeOf(d));
      return distribution(rng, p.answers, mode, secondShare(rng, 0.1));
    });
  }
  return { ...base, name: o.name, style: o.style ?? base.style, answers };
}

/** The same model answering its second choice `share` of the time on every prompt (nondeterminism at temperature 0). */
export function withSecondChoice(model: SimModel, share: number, seed = 1): SimModel {
  const rng = mulberry32(seed ^ fnv1a32(model.name));
  const answers: Record<string, AnswerDistribution[]> = {};
  for (const p of FINGERPRINT_BANK) {
    answers[p.id] = (model.answers[p.id] ?? []).map((d) => {
      const mode = modeOf(d);
      const second = Object.entries(d)
        .filter(([a]) => a !== mode)
        .sort((x, y) => y[1] - x[1])[0]?.[0];
      return { [mode]: 1 - share, [second ?? pickPopular(rng, p.answers, mode)]: share };
    });
  }
  return { ...model, name: `${model.name}+second${share}`, answers };
}

/** The most likely answer of a distribution. */
export function modeOf(d: AnswerDistribution): string {
  let best: [string, number] = ["", -1];
  for (const [a, p] of Object.entries(d)) if (p > best[1]) best = [a, p];
  return best[0];
}

/** Share of the bank's prompts on whose first phrasing two models' modal answers differ. */
export function modalDifference(a: SimModel, b: SimModel): number {
  let differ = 0;
  for (const p of FINGERPRINT_BANK) {
    const da = a.answers[p.id]?.[0];
    const db = b.answers[p.id]?.[0];
    if (da && db && modeOf(da) !== modeOf(db)) differ++;
  }
  return differ / FINGERPRINT_BANK.length;
}

/** The answer text a model gives to a phrasing of a prompt (its style applied), drawn with `rng`. */
export function answerText(model: SimModel, promptId: string, phrasing: number, rng: () => number): string {
  const d = model.answers[promptId]?.[phrasing] ?? model.answers[promptId]?.[0];
  if (!d) throw new RangeError(`model ${model.name} has no answers to ${promptId}`);
  let r = rng();
  let answer = modeOf(d);
  for (const [a, p] of Object.entries(d)) {
    r -= p;
    if (r < 0) {
      answer = a;
      break;
    }
  }
  const prompt = FINGERPRINT_BANK.find((p) => p.id === promptId);
  const shown = prompt?.form === "letters" || prompt?.id === "fp-tie-break" ? answer : displayWord(answer);
  switch (model.style) {
    case "plain":
      return shown;
    case "period":
      return `${shown}.`;
    case "bold":
      return `**${shown}**`;
    case "sentence":
      // Asked for one word, a chatty model still gives one word; a number it may wrap.
      return prompt?.form === "number" ? `My pick: ${shown}.` : `${shown}.`;
  }
}

const NAMES: Record<string, string> = {
  openai: "OpenAI",
  anthropic: "Anthropic",
  google: "Google",
  meta: "Meta",
  mistral: "Mistral AI",
  alibaba: "Alibaba Cloud",
};
const displayWord = (a: string): string => NAMES[a] ?? (/^[a-z]/.test(a) ? a[0]?.toUpperCase() + a.slice(1) : a);

/** Tokens a model counts for a chat prompt of this text (its framing included). */
export const promptTokens = (model: SimModel, text: string): number => Math.ceil(text.length * model.tokensPerChar) + model.promptOverhead;
/** Tokens a model counts for an answer. */
export const completionTokens = (model: SimModel, text: string): number => Math.max(1, Math.round(text.length * model.tokensPerChar));

/** What a relay sees of a request: which prompt and phrasing (for a golden sample: its name, phrasing 0), and the headers. */
export interface ServedRequest {
  promptId: string;
  phrasing: number;
  headers: Readonly<Record<string, string>>;
}

/** A relay: which model answers a request. */
export type Serving = (req: ServedRequest, rng: () => number) => SimModel;

/** The model it names, always. */
export const honest =
  (model: SimModel): Serving =>
  () =>
    model;

/** Another model for `share` of the requests (1: all of them; a line that always did is "never matched"). */
export const substitute =
  (real: SimModel, other: SimModel, share = 1): Serving =>
  (_req, rng) =>
    rng() < share ? other : real;

/** The real model for the requests it takes for probes, the other for the rest. */
export const recognisesProbes =
  (real: SimModel, other: SimModel, isProbe: (req: ServedRequest) => boolean): Serving =>
  (req) =>
    isProbe(req) ? real : other;

/** A recogniser that knows each prompt's fixed wording (its first phrasing): rotating phrasings defeat it. */
export const byFixedPrompt =
  (phrasing = 0) =>
  (req: ServedRequest): boolean =>
    req.phrasing === phrasing;

/** A recogniser that looks for a header a prober might send; probes that send the SDK's own headers carry none. */
export const byHeader =
  (name: string) =>
  (req: ServedRequest): boolean =>
    Object.keys(req.headers).some((h) => h.toLowerCase() === name.toLowerCase());

/** Usage as a relay reports it: the true count × `factor` (inflation), plus `offset`, plus a jitter of ±`jitter` tokens. */
export function reportedTokens(trueTokens: number, o: { factor?: number; offset?: number; jitter?: number }, rng: () => number): number {
  const jitter = o.jitter ? Math.round((rng() * 2 - 1) * o.jitter) : 0;
  return Math.max(0, Math.round(trueTokens * (o.factor ?? 1)) + (o.offset ?? 0) + jitter);
}
