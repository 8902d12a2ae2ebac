// What of a client's request headers goes on to the line (docs/router.md): everything an SDK sends
// (user agent, `x-stainless-*`, `anthropic-version`, `anthropic-beta`…) so that routed traffic and
// probes look alike to a relay, but never the client's credential, its cookies, hop-by-hop headers,
// linewatch's own, or what would reveal the client's address; `accept-encoding` stays behind so the
// answer comes uncompressed and can be checked in-band.

const NEVER = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "host",
  "content-length",
  "content-type",
  "accept",
  "accept-encoding",
  // credentials, and what ties a request to the client's own account
  "authorization",
  "x-api-key",
  "api-key",
  "cookie",
  "openai-organization",
  "openai-project",
  // the client's address
  "forwarded",
  "x-real-ip",
  "via",
]);

export interface ClientHeaders {
  /** Name, value, name, value…: lower-case names, in the client's order. */
  forward: string[];
  /** The header the client sent its own key in (an Anthropic line's key goes the same way). */
  credential: "authorization" | "x-api-key" | null;
  /** The client sent `anthropic-version` (passed on unchanged, whatever it says). */
  anthropicVersion: boolean;
}

const isDropped = (name: string): boolean => NEVER.has(name) || name.startsWith("x-linewatch-") || name.startsWith("x-forwarded-");

/** From Node's raw header list (name, value, …). */
export function clientHeaders(raw: readonly string[]): ClientHeaders {
  const forward: string[] = [];
  let credential: ClientHeaders["credential"] = null;
  let anthropicVersion = false;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (name === "x-api-key") credential = "x-api-key";
    else if (name === "authorization" && credential === null) credential = "authorization";
    else if (name === "anthropic-version") anthropicVersion = true;
    if (!isDropped(name)) forward.push(name, raw[i + 1] as string);
  }
  return { forward, credential, anthropicVersion };
}

/** From a standard Headers object (the Hono path). */
export function clientHeadersOf(headers: Headers): ClientHeaders {
  const raw: string[] = [];
  headers.forEach((value, name) => {
    raw.push(name, value);
  });
  return clientHeaders(raw);
}
