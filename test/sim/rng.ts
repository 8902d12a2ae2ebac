// Seeded randomness for simulations: every run is reproducible from its seed. The generator is core's.
import { fmix32 } from "@linewatch/core";

export { mulberry32 } from "@linewatch/core";

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
  for (const p of parts) h = fmix32(Math.imul(h ^ (p >>> 0), 0x01000193));
  return h;
}
