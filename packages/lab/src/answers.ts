// What a model says. `full` is a capable model; `small` is the smaller model a degraded line
// hides behind the same name: right shape, wrong numbers, shorter and plainer prose.
import { pick, shuffled } from "./prng";
import type { AnswerKind, JsonKey, PromptView } from "./prompt";

export type ModelSize = "full" | "small";

export interface Answer {
  content: string;
  /** The parsed object when the content is a JSON object, so faults can remove keys. */
  json: Record<string, unknown> | null;
}

interface CityFacts {
  country: string;
  populations: readonly number[];
  landmarks: readonly string[];
}

const CITIES: Record<string, CityFacts> = {
  Lyon: {
    country: "France",
    populations: [522250, 522228, 516092, 513275],
    landmarks: [
      "Basilica of Notre-Dame de Fourvière",
      "Vieux Lyon",
      "Parc de la Tête d'Or",
      "Place Bellecour",
      "Ancient Theatre of Fourvière",
      "Traboules of the Croix-Rousse",
    ],
  },
  Paris: {
    country: "France",
    populations: [2102650, 2113705, 2145906],
    landmarks: ["Eiffel Tower", "Louvre Museum", "Notre-Dame Cathedral", "Arc de Triomphe", "Sacré-Cœur"],
  },
  Berlin: {
    country: "Germany",
    populations: [3755251, 3677472, 3645000],
    landmarks: ["Brandenburg Gate", "Reichstag Building", "Museum Island", "East Side Gallery", "Berlin Cathedral"],
  },
};

const FALLBACK_CITY: CityFacts = {
  country: "Unknown",
  populations: [250000, 310000, 480000],
  landmarks: ["Old Town", "Central Station", "Cathedral Square", "River Promenade", "City Museum"],
};

const LONG_FULL = [
  "A status code only tells you that the upstream answered, not that the answer is any good.",
  "Checking only the status would keep sending traffic to a line that looks healthy while it quietly serves bad output.",
  "Free or cheap model endpoints often fail quietly: they return HTTP 200 with a truncated reply, a JSON object that misses fields, or a cached answer to an older question.",
  "Some providers even swap in a smaller model behind the same name, and the only symptom is worse answers.",
  "A load balancer that checks content can send a known prompt and compare the reply with what a good answer must contain.",
  "Length against the line's usual answers reveals truncation, required fields reveal broken structure, and a fresh token in each probe reveals replayed caches.",
  "Scoring these properties lets the balancer move traffic away from a degraded line before users notice the damage.",
  "Content checks cost a few extra requests, which is cheap compared with shipping wrong answers to every caller.",
  "They also give operators evidence, such as an excerpt and a score, that explains why a line was taken out of rotation.",
  "Latency still matters, but a reply that is suspiciously fast and short is a warning sign rather than a good result.",
] as const;
const LONG_FULL_STATUS = [0, 1] as const;

const LONG_SMALL = [
  "Status codes do not show if an answer is good.",
  "A line can return 200 and still give a bad answer.",
  "So the balancer should look at the text too.",
  "It can send test prompts and check the replies.",
  "Short or broken answers mean the line has a problem.",
  "Then it can send less traffic to that line.",
  "This keeps users from getting bad answers.",
  "It is a simple check that helps a lot.",
] as const;

const ECHO_FULL = [
  "Echoing a fresh token proves the answer was generated for this request rather than replayed from a cache.",
  "A cached reply cannot contain a token it has never seen, so echoing it shows the answer is fresh.",
  "The echo lets the caller match this answer to its request and spot stale, replayed responses.",
  "Tokens are echoed so a monitor can tell a newly generated answer from an old one served again.",
] as const;
const ECHO_SMALL = ["It is echoed to check the answer.", "This shows the reply is new."] as const;

const GENERIC_OPENERS = ["Here is a short answer.", "Good question.", "In brief:", "Sure.", "Happy to help."] as const;
const GENERIC_FULL = [
  "The usual approach works well, as long as you check the result against what you expected.",
  "It depends on the context, but a careful first step is to confirm the inputs and then verify the output.",
  "The simplest reliable path is to start small, measure what happens, and adjust from there.",
  "It can be done, and the details matter less than checking that the outcome is what you need.",
] as const;
const GENERIC_SMALL = ["Yes, that works.", "It depends.", "You can do that."] as const;

export function composeAnswer(kind: AnswerKind, view: PromptView, size: ModelSize, rng: () => number): Answer {
  switch (kind.kind) {
    case "json": {
      const json = composeJson(kind.keys, kind.subject, view.nonce, size, rng);
      return { content: JSON.stringify(json), json };
    }
    case "minutes":
      // The classic slip of a small model: ten minutes off.
      return plain(String(size === "full" ? kind.minutes : kind.minutes - 10));
    case "long":
      return plain(
        composeParagraph(
          size === "full" ? LONG_FULL : LONG_SMALL,
          size === "full" ? kind.targetChars : Math.round(kind.targetChars / 2),
          size,
          rng,
        ),
      );
    case "echo":
      return plain(`${kind.nonce}\n${pick(rng, size === "full" ? ECHO_FULL : ECHO_SMALL)}`);
    case "generic": {
      const sentence = size === "full" ? `${pick(rng, GENERIC_OPENERS)} ${pick(rng, GENERIC_FULL)}` : pick(rng, GENERIC_SMALL);
      return plain(view.nonce ? `${sentence} (ref ${view.nonce})` : sentence);
    }
  }
}

function plain(content: string): Answer {
  return { content, json: null };
}

/**
 * Sentences in a seeded order until the target length is reached (within about ±10%). The
 * full model always includes a sentence that says "status", which the shipped sample expects.
 */
function composeParagraph(pool: readonly string[], target: number, size: ModelSize, rng: () => number): string {
  const order = shuffled(
    rng,
    pool.map((_, i) => i),
  );
  if (size === "full") {
    const lead = pick(rng, LONG_FULL_STATUS);
    order.splice(order.indexOf(lead), 1);
    order.unshift(lead);
  }
  const parts: string[] = [];
  let length = -1;
  const low = target * 0.9;
  const high = target * 1.1;
  for (let round = 0; round < 50 && length < low; round++) {
    const candidates = round === 0 ? order : shuffled(rng, order);
    for (const index of candidates) {
      const sentence = pool[index] as string;
      if (length + 1 + sentence.length > high && parts.length > 0) continue;
      parts.push(sentence);
      length += 1 + sentence.length;
      if (length >= low) break;
    }
    if (round > 0 && parts.length > 0 && length + 1 + shortest(pool) > high) break;
  }
  const text = parts.join(" ");
  return text.length > high ? `${text.slice(0, Math.max(1, Math.round(target) - 1)).trimEnd()}.` : text;
}

function shortest(pool: readonly string[]): number {
  return Math.min(...pool.map((s) => s.length));
}

function composeJson(
  keys: JsonKey[],
  subject: string | null,
  nonce: string | null,
  size: ModelSize,
  rng: () => number,
): Record<string, unknown> {
  if (keys.length === 0) {
    const out: Record<string, unknown> = { answer: pick(rng, size === "full" ? GENERIC_FULL : GENERIC_SMALL) };
    if (nonce) out.request_id = nonce;
    return out;
  }
  const facts = (subject ? CITIES[subject] : undefined) ?? FALLBACK_CITY;
  const name = subject ?? "Sampleton";
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    out[key.name] = jsonValue(key, name, facts, size, rng);
  }
  return out;
}

function jsonValue(key: JsonKey, subject: string, facts: CityFacts, size: ModelSize, rng: () => number): unknown {
  const name = key.name.toLowerCase();
  if (key.kind.type === "array") {
    const { count } = key.kind;
    if (key.kind.of === "number") return Array.from({ length: count }, () => Math.floor(rng() * 1000));
    const pool = name.includes("landmark") ? facts.landmarks : [`${subject} item`];
    // The small model always lists the same first few; the full one varies its picks.
    const chosen = size === "full" ? shuffled(rng, pool) : pool.slice();
    return Array.from({ length: count }, (_, i) => chosen[i % chosen.length] as string);
  }
  if (key.kind.type === "number") {
    if (name.includes("population")) {
      const population = pick(rng, facts.populations);
      return size === "full" ? population : Math.round(population / 100000) * 100000;
    }
    return Math.floor(rng() * 1000);
  }
  if (key.kind.type === "boolean") return true;
  if (name === "city" || name === "name") return subject;
  if (name === "country") return facts.country;
  return `${subject} ${key.name}`;
}
