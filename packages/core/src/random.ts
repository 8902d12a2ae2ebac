// Seeded randomness and small non-cryptographic hashes, the one copy of each: the lab, the
// router-client's rendezvous hashing, the simulations and the benchmarks draw on these. Stable
// across processes and versions (two routers must agree where a session goes; two labs with the
// same seed answer the same way). Not for secrets.

/** mulberry32: a tiny, fast seeded generator of values in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** murmur3's 32-bit finaliser: full avalanche of a 32-bit value (nearby inputs land far apart). */
export function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a, 32 bit, over UTF-16 code units; `seed` is mixed into the offset basis. */
export function fnv1a32(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
