// Seeded randomness for the lab. Every choice the lab makes (wording, ids, jitter, which
// request errors) comes from here, so two labs with the same seed answer the same way. The
// generator and the hashes are core's (random.ts).
import { fmix32, fnv1a32, mulberry32 } from "@linewatch/core";

/** A seed or a salt as a number (FNV-1a). */
export function seedToNumber(seed: number | string): number {
  return fnv1a32(String(seed));
}

/**
 * A fresh generator for one purpose of one request of one line. Separate salts keep the
 * purposes independent: an `errors` mode that rolls dice does not shift the wording, so a
 * faulty lab and a healthy lab with the same seed still produce the same base content.
 */
export function rngFor(seed: number, seq: number, salt: string): () => number {
  return mulberry32(fmix32(fmix32(seed + Math.imul(seq + 1, 0x9e3779b9)) ^ fnv1a32(salt)));
}

export function pick<T>(rng: () => number, items: readonly T[]): T {
  if (items.length === 0) throw new RangeError("pick from an empty list");
  return items[Math.floor(rng() * items.length)] as T;
}

/** Fisher–Yates on a copy; the input is never mutated. */
export function shuffled<T>(rng: () => number, items: readonly T[]): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    const tmp = out[i] as T;
    out[i] = out[j] as T;
    out[j] = tmp;
  }
  return out;
}

export function hexFrom(rng: () => number, length: number): string {
  let out = "";
  while (out.length < length)
    out += Math.floor(rng() * 0x100000000)
      .toString(16)
      .padStart(8, "0");
  return out.slice(0, length);
}
