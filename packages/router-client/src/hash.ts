// Small non-cryptographic hashes for rendezvous hashing: fast, well mixed, stable across
// processes and versions (two routers must agree where a session goes).

/** murmur3's 32-bit finaliser: full avalanche of a 32-bit value. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a over UTF-16 code units with a seed, finalised with fmix32. */
export function hashString(s: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/** Two 32-bit hashes of a key, so combining with a line seed is not a plain XOR of one word. */
export function hashKey(s: string): [number, number] {
  return [hashString(s, 0), hashString(s, 0x5bd1e995)];
}

/** A uniform number in (0, 1) from a key's hashes and a line's seed. */
export function unitFromPair(k1: number, k2: number, seed: number): number {
  const h = fmix32((fmix32((k1 ^ seed) >>> 0) ^ k2 ^ Math.imul(seed, 0x27d4eb2d)) >>> 0);
  return (h + 0.5) / 4294967296;
}
