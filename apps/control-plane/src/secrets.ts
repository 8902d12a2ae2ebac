import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "./logger";

/**
 * Upstream API keys at rest: AES-256-GCM, stored as `v1:<iv>:<tag>:<ciphertext>` (base64url).
 * A previous key may be given during a rotation; decryption tries the current key first.
 */
export interface SecretBox {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
  /** True when `sealed` was written with the current key (rotation re-encrypts the others). */
  isCurrent(sealed: string): boolean;
}

const KEY_FORMAT = "must be 32 bytes: 64 hex characters or 44 base64 characters (openssl rand -hex 32)";

function decodeKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (/^[0-9a-f]{64}$/i.test(trimmed)) return Buffer.from(trimmed, "hex");
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) return null;
  const key = Buffer.from(trimmed, "base64");
  return key.length === 32 ? key : null;
}

/** Why a secret key is unusable, or null (config validation). */
export function secretKeyProblem(text: string): string | null {
  return decodeKey(text) ? null : KEY_FORMAT;
}

function parseKey(text: string, name: string): Buffer {
  const key = decodeKey(text);
  if (!key) throw new Error(`${name} ${KEY_FORMAT}`);
  return key;
}

export function createSecretBox(currentKey: string, previousKey?: string): SecretBox {
  const current = parseKey(currentKey, "LINEWATCH_SECRET_KEY");
  const keys = [current];
  if (previousKey) {
    const previous = parseKey(previousKey, "LINEWATCH_SECRET_KEY_PREVIOUS");
    if (!previous.equals(current)) keys.push(previous);
  }

  const open = (key: Buffer, sealed: string): string => {
    const [version, iv, tag, data] = sealed.split(":");
    if (version !== "v1" || !iv || !tag || data === undefined) throw new Error("not a sealed secret");
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8");
  };

  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", current, iv);
      const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), data.toString("base64url")].join(":");
    },
    decrypt(sealed) {
      for (const key of keys) {
        try {
          return open(key, sealed);
        } catch {
          // wrong key: try the previous one, if any
        }
      }
      throw new Error("cannot decrypt an upstream key with LINEWATCH_SECRET_KEY (or LINEWATCH_SECRET_KEY_PREVIOUS)");
    },
    isCurrent(sealed) {
      try {
        open(current, sealed);
        return true;
      } catch {
        return false;
      }
    },
  };
}

export const SECRET_KEY_FILE = "secret.key";

/**
 * The embedded default: a key generated once into the data directory (mode 0600), with a warning.
 * Losing the file loses every stored upstream key, so it is created exclusively and never rewritten.
 */
export function loadOrCreateSecretKey(dataDir: string, logger: Logger): string {
  const file = join(dataDir, SECRET_KEY_FILE);
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    try {
      writeFileSync(file, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
      logger.warn(
        "LINEWATCH_SECRET_KEY is not set: generated a key into the data directory; back it up with the data, and set LINEWATCH_SECRET_KEY in production",
        {
          file,
        },
      );
    } catch (error) {
      // Another process created it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  const key = readFileSync(file, "utf8").trim();
  const problem = secretKeyProblem(key);
  if (problem) throw new Error(`${file}: ${problem}`);
  return key;
}

/**
 * Replace every occurrence of the given secrets in `text` (an upstream's error body may echo the
 * key it was sent). Secrets shorter than 6 characters are left alone: they would redact noise.
 */
export function redactSecrets(text: string, secrets: Iterable<string | null | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 6 && out.includes(secret)) out = out.split(secret).join("[redacted]");
  }
  return out;
}

const CREDENTIAL_HEADER = /auth|key|token|secret|passw|cookie|credential|signature/i;

/** What of a line must never be stored or shown: its key and the values of credential-like headers. */
export function lineSecrets(apiKey: string | null, headers: Record<string, string>): string[] {
  return [
    ...(apiKey ? [apiKey] : []),
    ...Object.entries(headers).flatMap(([name, value]) => (CREDENTIAL_HEADER.test(name) ? [value] : [])),
  ];
}

/** A probe's HTTP outcome with the line's secrets taken out of what the upstream said. */
export function redactOutcome<T extends { bodyText: string; errorMessage?: string }>(outcome: T, secrets: string[]): T {
  if (secrets.length === 0) return outcome;
  return {
    ...outcome,
    bodyText: redactSecrets(outcome.bodyText, secrets),
    ...(outcome.errorMessage !== undefined ? { errorMessage: redactSecrets(outcome.errorMessage, secrets) } : {}),
  };
}
