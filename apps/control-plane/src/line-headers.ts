import { type Db, type LineRow, listLineRows, replaceLineHeadersEnc } from "@linewatch/db";
import type { SecretBox } from "./secrets";

/**
 * A line's extra headers are credentials as often as not (Anthropic's `x-api-key`, Azure's
 * `api-key`, an `authorization` of the user's own): every value is kept like the API key, sealed
 * at rest and sent only to upstreams and router tokens. The database keeps the names in the clear
 * (the API shows them with `hasValue`) and the whole map as one ciphertext.
 */
export function sealHeaders(
  secrets: SecretBox,
  headers: Record<string, string>,
): { headers: Record<string, boolean>; headersEnc: string | null } {
  const names = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, value !== ""]));
  return { headers: names, headersEnc: Object.keys(headers).length > 0 ? secrets.encrypt(JSON.stringify(headers)) : null };
}

/** The header map to send: opened from headers_enc (plus any value stored before sealing, not yet sealed). Throws when the key cannot open it. */
export function openHeaders(secrets: SecretBox, row: Pick<LineRow, "headers" | "headersEnc">): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(row.headers)) if (typeof v === "string") out[name] = v;
  if (row.headersEnc) Object.assign(out, JSON.parse(secrets.decrypt(row.headersEnc)) as Record<string, string>);
  return out;
}

/** Has this row a header value in the clear (stored before values were sealed)? */
const hasPlainHeaders = (row: Pick<LineRow, "headers">) => Object.values(row.headers).some((v) => typeof v === "string");

/** Seal the header values stored in the clear by an earlier version; returns the names of the lines changed. */
export async function sealLegacyHeaders(db: Db, secrets: SecretBox): Promise<string[]> {
  const sealed: string[] = [];
  for (const { row } of await listLineRows(db)) {
    if (!hasPlainHeaders(row)) continue;
    const next = sealHeaders(secrets, openHeaders(secrets, row));
    if (await replaceLineHeadersEnc(db, row.id, row, next)) sealed.push(row.name);
  }
  return sealed;
}
