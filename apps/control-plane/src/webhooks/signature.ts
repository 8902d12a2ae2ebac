// How a webhook delivery is signed (docs/alerts.md#signature): HMAC-SHA256, keyed with the sink's
// secret (its UTF-8 bytes), over `<timestamp>.<body>`, where the timestamp (Unix seconds) is sent
// in its own header, so a receiver can refuse a replayed request by its age.
import { createHmac, timingSafeEqual } from "node:crypto";

export const WEBHOOK_HEADERS = {
  /** `v1=<hex>`: the signature. */
  signature: "x-linewatch-signature",
  /** Unix seconds when this attempt was signed (a retry is signed again). */
  timestamp: "x-linewatch-timestamp",
  /** The idempotency key: the same on every attempt of one event to one sink. */
  delivery: "x-linewatch-delivery",
  /** The event's webhook kind (the narrowest: fail_safe before state_change; `test` for a test). */
  event: "x-linewatch-event",
} as const;

/** A receiver's default tolerance for a timestamp's age. */
export const DEFAULT_TOLERANCE_SEC = 300;

export function signWebhook(secret: string, timestampSec: number, body: string): string {
  return `v1=${createHmac("sha256", secret).update(`${timestampSec}.${body}`).digest("hex")}`;
}

/**
 * What a receiver does (the README's example is this, in plain Node): the signature matches the
 * body and timestamp, and the timestamp is within `toleranceSec` of `nowSec`.
 */
export function verifyWebhook(
  secret: string,
  headers: { signature: string | null | undefined; timestamp: string | null | undefined },
  body: string,
  nowSec: number,
  toleranceSec = DEFAULT_TOLERANCE_SEC,
): { ok: true } | { ok: false; why: string } {
  const ts = Number(headers.timestamp);
  if (!headers.timestamp || !Number.isInteger(ts)) return { ok: false, why: "no timestamp" };
  if (Math.abs(nowSec - ts) > toleranceSec) return { ok: false, why: "timestamp out of tolerance" };
  const expected = Buffer.from(signWebhook(secret, ts, body));
  const given = Buffer.from(headers.signature ?? "");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, why: "bad signature" };
  return { ok: true };
}
