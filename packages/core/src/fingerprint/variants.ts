// A sample's phrasings (`variants`): the same question in other words, rotated from probe to probe
// so that a relay recognising one fixed prompt does not recognise the others. Answers are anchored
// per phrasing (a model may answer two phrasings differently), keyed by a hash of its text, so
// editing a phrasing starts its anchor over and reordering them changes nothing
// (docs/scoring.md#what-a-relay-can-fake).
import { fnv1a32 } from "../random";

/** Phrasings a sample may list besides its request's own prompt. */
export const MAX_VARIANTS = 8;
export const MAX_VARIANT_CHARS = 4000;

/** The key a phrasing's anchors are stored under. */
export const variantKey = (text: string): string => fnv1a32(text.trim()).toString(36);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Text of a message's content: a string, or `{type: "text", text}` parts (chat, Anthropic, Responses). */
function contentText(content: unknown): string | null {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const parts = content.flatMap((p) => (isRecord(p) && typeof p.text === "string" ? [p.text] : []));
  return parts.length > 0 ? parts.join("") : null;
}

/** Where the prompt lives: the last user message of `messages` or `input`, or `input` itself when it is a string. */
type Slot =
  | { list: "messages" | "input"; items: unknown[]; index: number; message: Record<string, unknown> }
  | { list: "input"; text: string };

function promptSlot(request: Record<string, unknown>): Slot | null {
  for (const list of ["messages", "input"] as const) {
    const items = request[list];
    if (list === "input" && typeof items === "string") return { list, text: items };
    if (!Array.isArray(items)) continue;
    for (let index = items.length - 1; index >= 0; index--) {
      const message: unknown = items[index];
      if (isRecord(message) && message.role === "user" && contentText(message.content) !== null) return { list, items, index, message };
    }
  }
  return null;
}

/** The request's own prompt (its last user message); null when the request has none a phrasing can replace. */
export function promptText(request: Record<string, unknown>): string | null {
  const slot = promptSlot(request);
  if (slot === null) return null;
  return "text" in slot ? slot.text : contentText(slot.message.content);
}

/** The request with its prompt replaced by `text` (a copy; the request is never changed). */
export function withPhrasing(request: Record<string, unknown>, text: string): Record<string, unknown> {
  const slot = promptSlot(request);
  if (slot === null) return request;
  if ("text" in slot) return { ...request, input: text };
  const items = [...slot.items];
  items[slot.index] = { ...slot.message, content: text };
  return { ...request, [slot.list]: items };
}

/** Every phrasing of a sample: its request's own prompt first, then its variants. */
export function phrasings(sample: { request: Record<string, unknown>; variants?: readonly string[] }): string[] {
  const own = promptText(sample.request);
  const out = own === null ? [] : [own];
  for (const v of sample.variants ?? []) if (!out.includes(v)) out.push(v);
  return out;
}

/**
 * The phrasing a probe sends, chosen at random (`rng`, the shell's), with its key; the request as
 * written when the sample has no variants. Random rather than in turn: a relay cannot predict it.
 */
export function pickPhrasing(
  sample: { request: Record<string, unknown>; variants?: readonly string[] },
  rng: () => number,
): { request: Record<string, unknown>; variant: string } {
  const all = phrasings(sample);
  if (all.length === 0) return { request: sample.request, variant: "" };
  const text = all[Math.min(all.length - 1, Math.floor(rng() * all.length))] ?? "";
  return { request: withPhrasing(sample.request, text), variant: variantKey(text) };
}

/** Problems with a sample's `variants`; empty when they are usable. */
export function checkVariants(request: Record<string, unknown>, variants: unknown): string[] {
  if (variants === undefined) return [];
  if (!Array.isArray(variants)) return ["variants: a list of phrasings (strings)"];
  const problems: string[] = [];
  if (variants.length > MAX_VARIANTS) problems.push(`variants: at most ${MAX_VARIANTS}`);
  if (variants.some((v) => typeof v !== "string" || v.trim() === "" || v.length > MAX_VARIANT_CHARS))
    problems.push(`variants: each a non-empty string of at most ${MAX_VARIANT_CHARS} characters`);
  if (variants.length > 0 && promptText(request) === null) problems.push("variants: the request has no user prompt a phrasing can replace");
  return problems;
}
