// Seeded randomness for the lab. Every choice the lab makes (wording, ids, jitter, which
// request errors) comes from here, so two labs with the same seed answer the same way.

/** FNV-1a, 32 bit: turns a seed or a salt into a number. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** murmur3's finaliser: spreads nearby inputs (seq 1, 2, 3…) over the whole range. */
export function mix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32: tiny, fast, good enough for picking words. Returns values in [0, 1). */
export function mulberry32(state: number): () => number {
  let a = state >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function seedToNumber(seed: number | string): number {
  return hashString(String(seed));
}

/**
 * A fresh generator for one purpose of one request of one line. Separate salts keep the
 * purposes independent: an `errors` mode that rolls dice does not shift the wording, so a
 * faulty lab and a healthy lab with the same seed still produce the same base content.
 */
export function rngFor(seed: number, seq: number, salt: string): () => number {
  return mulberry32(mix32(mix32(seed + Math.imul(seq + 1, 0x9e3779b9)) ^ hashString(salt)));
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
