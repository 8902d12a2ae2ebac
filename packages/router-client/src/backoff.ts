import type { Rng } from "./types";

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };

/**
 * Delay before retry number `failures` (1 = after the first failure): exponential with
 * "equal jitter", so delays grow until the cap yet routers don't retry in lockstep.
 */
export function backoffDelay(policy: BackoffPolicy, failures: number, rng: Rng): number {
  const exp = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
  return exp / 2 + rng() * (exp / 2);
}
