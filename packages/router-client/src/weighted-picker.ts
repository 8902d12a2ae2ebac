import { hashKey, hashString, unitFromPair } from "./hash";
import type { Rng } from "./types";

export interface Weighted {
  readonly id: string;
  readonly weight: number;
}

export interface PickOptions {
  /** Same key → same item while that item keeps weight (weighted rendezvous hashing). */
  affinityKey?: string | undefined;
  /** Ids never to return, e.g. the line a retry is moving away from. */
  exclude?: ReadonlyArray<string> | undefined;
}

export interface WeightedPicker<T extends Weighted> {
  /** Items with weight > 0, in input order. */
  readonly items: ReadonlyArray<T>;
  readonly totalWeight: number;
  /**
   * Weighted choice: O(log n) by binary search over prefix sums (plus O(k log k) for k
   * excluded ids); with an affinity key, O(n) rendezvous over the items, O(1) for a key seen
   * recently (the last few thousand keys are remembered). Null when no item with weight is left.
   */
  pick(rng: Rng, options?: PickOptions): T | null;
}

/**
 * The one weighted picker. Built once per table version; never mutates `items`.
 * Items with weight ≤ 0 are never picked.
 */
export function createWeightedPicker<T extends Weighted>(input: ReadonlyArray<T>): WeightedPicker<T> {
  const items = input.filter((it) => it.weight > 0);
  const n = items.length;
  // ends[i] = sum of weights of items[0..i]; item i owns [ends[i] - w_i, ends[i]).
  const ends = new Float64Array(n);
  const invWeight = new Float64Array(n);
  const seeds = new Uint32Array(n);
  const indexById = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < n; i++) {
    const it = items[i] as T;
    total += it.weight;
    ends[i] = total;
    invWeight[i] = 1 / it.weight;
    seeds[i] = hashString(it.id, 0x9747b28c);
    indexById.set(it.id, i);
  }

  // First index whose end exceeds r, for r in [0, total).
  const search = (r: number): number => {
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((ends[mid] as number) > r) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };

  const excludedIndexes = (exclude: ReadonlyArray<string>): number[] => {
    const out: number[] = [];
    for (const id of exclude) {
      const i = indexById.get(id);
      if (i !== undefined && !out.includes(i)) out.push(i);
    }
    return out.sort((a, b) => a - b);
  };

  const pickByWeight = (rng: Rng, exclude: ReadonlyArray<string> | undefined): T | null => {
    if (exclude === undefined || exclude.length === 0) {
      return items[search(rng() * total)] ?? null;
    }
    const skip = excludedIndexes(exclude);
    let remaining = total;
    for (const i of skip) remaining -= (items[i] as T).weight;
    if (remaining <= 0) return null;
    // Draw in the weight that is left, then step over each excluded interval in order.
    let r = rng() * remaining;
    for (const i of skip) {
      const w = (items[i] as T).weight;
      if (r >= (ends[i] as number) - w) r += w;
      else break;
    }
    return items[search(r)] ?? null;
  };

  // Sessions come back: remember recent keys (the answer for a key is fixed for this picker).
  const byKey = new Map<string, T | null>();
  const AFFINITY_CACHE_SIZE = 4096;

  const pickByKey = (key: string, exclude: ReadonlyArray<string> | undefined): T | null => {
    const skip = exclude !== undefined && exclude.length > 0 ? excludedIndexes(exclude) : null;
    if (skip === null) {
      const hit = byKey.get(key);
      if (hit !== undefined) return hit;
    }
    const [k1, k2] = hashKey(key);
    let best = -1;
    let bestScore = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      if (skip?.includes(i)) continue;
      // Weighted rendezvous: -ln(u)/w is Exp(w); the smallest wins with probability w/Σw, and
      // removing a line only moves the keys it had won.
      const score = -Math.log(unitFromPair(k1, k2, seeds[i] as number)) * (invWeight[i] as number);
      if (score < bestScore) {
        bestScore = score;
        best = i;
      }
    }
    const chosen = best < 0 ? null : (items[best] as T);
    if (skip === null) {
      if (byKey.size >= AFFINITY_CACHE_SIZE) byKey.clear();
      byKey.set(key, chosen);
    }
    return chosen;
  };

  return {
    items,
    totalWeight: total,
    pick(rng, options) {
      if (n === 0) return null;
      if (options?.affinityKey !== undefined) return pickByKey(options.affinityKey, options.exclude);
      return pickByWeight(rng, options?.exclude);
    },
  };
}
