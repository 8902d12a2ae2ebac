// Hashes for rendezvous hashing, on core's (random.ts): fast, well mixed, stable across processes
// and versions (two routers must agree where a session goes).
import { fmix32, fnv1a32 } from "@linewatch/core";

/** FNV-1a over UTF-16 code units with a seed, finalised with fmix32. */
export const hashString = (s: string, seed = 0): number => fmix32(fnv1a32(s, seed));

/** Two 32-bit hashes of a key, so combining with a line seed is not a plain XOR of one word. */
export function hashKey(s: string): [number, number] {
  return [hashString(s, 0), hashString(s, 0x5bd1e995)];
}

/** A uniform number in (0, 1) from a key's hashes and a line's seed. */
export function unitFromPair(k1: number, k2: number, seed: number): number {
  const h = fmix32((fmix32((k1 ^ seed) >>> 0) ^ k2 ^ Math.imul(seed, 0x27d4eb2d)) >>> 0);
  return (h + 0.5) / 4294967296;
}
