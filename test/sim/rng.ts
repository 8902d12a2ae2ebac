// Seeded randomness for simulations: every run is reproducible from its seed.

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

/** A log-normal draw with median 1 and shape `sigma` (Box–Muller). */
export function logNormal(rng: () => number, sigma: number): number {
  const u = Math.max(rng(), 1e-12);
  const v = rng();
  return Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
}

export function hex(rng: () => number, length: number): string {
  let s = "";
  while (s.length < length) s += Math.floor(rng() * 16).toString(16);
  return s;
}

/** A well-mixed 32-bit seed from several integers (murmur3's finaliser), so nearby seeds give unrelated streams. */
export function seedFrom(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193) >>> 0;
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h ^= h >>> 16;
  }
  return h >>> 0;
}
