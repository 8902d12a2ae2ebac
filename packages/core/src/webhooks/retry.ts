// When a failed webhook delivery is tried again, and when it is given up (docs/alerts.md#delivery).

/** The first retry waits about this long; each one after waits twice as long as the one before. */
export const WEBHOOK_FIRST_RETRY_MS = 1_000;
/** No wait between two attempts is longer than this. */
export const WEBHOOK_MAX_RETRY_MS = 5 * 60_000;

/** What becomes of a delivery whose attempt failed: another attempt at `at`, or the dead letters. */
export type WebhookRetry = { retry: true; at: number } | { retry: false };

/**
 * After `attempts` failed attempts, at `now`: the next one waits 1 s, 2 s, 4 s, … up to 5 minutes,
 * each drawn between half and all of that (`rng`), so the sinks a dead receiver shares a moment
 * with do not retry in step. The last attempt is at the deadline; a failure at or after it is final.
 */
export function nextWebhookAttempt(attempts: number, now: number, deadline: number, rng: () => number): WebhookRetry {
  if (now >= deadline) return { retry: false };
  const full = Math.min(WEBHOOK_MAX_RETRY_MS, WEBHOOK_FIRST_RETRY_MS * 2 ** Math.max(0, Math.min(attempts - 1, 30)));
  const wait = full * (0.5 + 0.5 * rng());
  return { retry: true, at: Math.min(deadline, Math.ceil(now + wait)) };
}
