// Filling a sample's request template: {{nonce}} and {{now}} in every string, nothing else.

export interface TemplateVars {
  /** Unique per probe (the shell makes it with probeNonce); non-empty, no braces. */
  nonce: string;
  /** ms since epoch; becomes an ISO-8601 time. */
  now: number;
}

const PLACEHOLDERS = /\{\{(nonce|now)\}\}/g;
const HAS_PLACEHOLDER = /\{\{(?:nonce|now)\}\}/;

/**
 * A deep copy of `request` (JSON data) with the placeholders filled. Object keys and
 * non-string values are kept; unknown placeholders such as `{{model}}` are left alone.
 * Throws RangeError for a nonce that is empty or holds braces, or a `now` that is not a time:
 * those are bugs in the caller, not outcomes of a probe.
 */
export function fillTemplate<T>(request: T, vars: TemplateVars): T {
  if (vars.nonce === "" || /[{}]/.test(vars.nonce)) {
    throw new RangeError("fillTemplate: the nonce must be non-empty and hold no braces");
  }
  const values = { nonce: vars.nonce, now: new Date(vars.now).toISOString() };
  return fillValue(request, values) as T;
}

function fillValue(value: unknown, values: Record<"nonce" | "now", string>): unknown {
  if (typeof value === "string") return fillString(value, values);
  if (Array.isArray(value)) return value.map((item) => fillValue(item, values));
  if (isPlainObject(value)) {
    // fromEntries defines properties, so a "__proto__" key stays a key.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillValue(v, values)]));
  }
  return value;
}

function fillString(text: string, values: Record<"nonce" | "now", string>): string {
  let out = text;
  // A short nonce can complete a placeholder around it ("{{{{nonce}}ce}}" with nonce "non"),
  // so fill until none is left. Each pass removes braces and the values add none: it ends.
  while (HAS_PLACEHOLDER.test(out)) {
    out = out.replace(PLACEHOLDERS, (_match, name: "nonce" | "now") => values[name]);
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

const NONCE_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789";
export const NONCE_LENGTH = 12;

/**
 * A probe's nonce from 12+ random bytes: 12 lower-case letters and digits, a letter first and at least
 * one digit, like any request id a client makes up. Nothing in it names linewatch (a `lw-` prefix
 * would let a relay pick probes out: docs/scoring.md#what-a-relay-can-fake).
 */
export function probeNonce(bytes: Uint8Array): string {
  if (bytes.length < NONCE_LENGTH) throw new RangeError(`probeNonce: needs ${NONCE_LENGTH} random bytes`);
  const chars = Array.from(bytes.subarray(0, NONCE_LENGTH), (b) => NONCE_CHARS[b % 36] as string);
  chars[0] = NONCE_CHARS[(bytes[0] as number) % 26] as string;
  // A random "lw…" start (1 in 936) would look like the old `lw-` prefix: make the second a digit.
  if (chars[0] === "l" && chars[1] === "w") chars[1] = String((bytes[1] as number) % 10);
  if (!chars.some((c) => c >= "0" && c <= "9")) {
    chars[1 + ((bytes[1] as number) % (NONCE_LENGTH - 1))] = String((bytes[2] as number) % 10);
  }
  return chars.join("");
}
