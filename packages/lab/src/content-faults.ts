// Silent content faults: the answer still comes back 200, but worse.
import { shuffled } from "./prng";

/** Keeps the first `fraction` of the text, without splitting a surrogate pair. */
export function truncateText(text: string, fraction: number): string {
  let end = Math.round(text.length * fraction);
  if (end > 0 && end < text.length) {
    const code = text.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  }
  return text.slice(0, end);
}

/** The named keys, or else half the keys (at least one) picked by the seed. */
export function dropJsonFields(
  json: Record<string, unknown>,
  fields: readonly string[] | null,
  rng: () => number,
): Record<string, unknown> {
  const keys = Object.keys(json);
  const dropped = new Set(fields ?? shuffled(rng, keys).slice(0, Math.max(1, Math.ceil(keys.length / 2))));
  const out: Record<string, unknown> = {};
  for (const key of keys) if (!dropped.has(key)) out[key] = json[key];
  return out;
}
