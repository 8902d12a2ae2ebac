// What of a client's request headers goes on to the line (docs/router.md): everything an SDK sends
// (user agent, `x-stainless-*`, `anthropic-version`, `anthropic-beta`…) so that routed traffic and
// probes look alike to a relay, but never the client's credential, its cookies, hop-by-hop headers,
// linewatch's own, or what would reveal the client's address; `accept-encoding` stays behind so the
// answer comes uncompressed and can be checked in-band.

import type { IncomingHttpHeaders } from "node:http";

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

/**
 * From Node's parsed headers (lower-case names; the listener has them already, so no copy is made).
 * `x-api-key` wins over `authorization` as the client's credential, as it does at Anthropic's API.
 */
export function clientHeaders(headers: IncomingHttpHeaders): ClientHeaders {
  const forward: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || isDropped(name)) continue;
    forward.push(name, typeof value === "string" ? value : value.join(", "));
  }
  const credential = headers["x-api-key"] !== undefined ? "x-api-key" : headers.authorization !== undefined ? "authorization" : null;
  return { forward, credential, anthropicVersion: headers["anthropic-version"] !== undefined };
}

/** From a standard Headers object (the Hono path). */
export function clientHeadersOf(headers: Headers): ClientHeaders {
  const parsed: IncomingHttpHeaders = {};
  headers.forEach((value, name) => {
    parsed[name] = value;
  });
  return clientHeaders(parsed);
}
