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

function parseKey(text: string, name: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (key.length !== 32) throw new Error(`${name} must be 32 bytes (64 hex characters or base64)`);
  return key;
}

export function createSecretBox(currentKey: string, previousKey?: string): SecretBox {
  const keys = [parseKey(currentKey, "LINEWATCH_SECRET_KEY")];
  if (previousKey) keys.push(parseKey(previousKey, "LINEWATCH_SECRET_KEY_PREVIOUS"));
  const [current] = keys as [Buffer];

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

/** The embedded default: a key generated once into the data directory, with a warning. */
export function loadOrCreateSecretKey(dataDir: string, logger: Logger): string {
  const file = join(dataDir, "secret.key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString("hex");
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  logger.warn("LINEWATCH_SECRET_KEY is not set: generated one into the data directory; set it explicitly in production", {
    file,
  });
  return key;
}
