import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { StoredToken, TokenStore } from "../auth";

/** The cookie a browser carries its token in: a browser cannot send a bearer header on a page load. */
export const TOKEN_COOKIE = "lw_token";
const COOKIE_MAX_AGE_SEC = 7 * 86_400;

/** Who looks at the dashboard. `open`: no token exists yet, everything is allowed (like the API). */
export type Viewer = { role: "admin" | "viewer" | "open"; tokenName: string | null };

export type Access =
  | { ok: true; viewer: Viewer }
  /** No credentials, or ones that do not name an active token (`stale`: the cookie had one, now revoked). */
  | { ok: false; reason: "anonymous" | "stale" }
  /** A valid token whose role may not use the dashboard (router tokens read tables only). */
  | { ok: false; reason: "forbidden"; role: string };

/**
 * The dashboard's view of the token table. The API's store is not handed to the dashboard, and a
 * cache here would keep a revoked token working (or a new one failing) for its TTL; a person's
 * clicks are few, so every dashboard request reads the token table afresh (one small query).
 */
export class DashboardTokens {
  constructor(private readonly store: TokenStore) {}

  async isOpen(): Promise<boolean> {
    this.store.invalidate();
    return this.store.isOpen();
  }

  /** Fresh unless `reuse`: right after isOpen() in the same request, its read is still current. */
  async authenticate(token: string, reuse = false): Promise<StoredToken | null> {
    if (!reuse) this.store.invalidate();
    return this.store.authenticate(token);
  }
}

export const canWrite = (v: Viewer) => v.role === "admin" || v.role === "open";

/**
 * The dashboard's reading of docs/roles.md for browsers: the token comes from the `lw_token` cookie (or an
 * Authorization header, for scripts); admin and viewer may read, only admin may change things.
 */
export async function resolveAccess(c: Context, tokens: DashboardTokens): Promise<Access> {
  if (await tokens.isOpen()) return { ok: true, viewer: { role: "open", tokenName: null } };
  const bearer = c.req.header("authorization")?.match(/^Bearer\s+(\S+)$/i)?.[1];
  const token = bearer ?? getCookie(c, TOKEN_COOKIE);
  if (!token) return { ok: false, reason: "anonymous" };
  const row = await tokens.authenticate(token, true);
  if (!row) return { ok: false, reason: bearer ? "anonymous" : "stale" };
  if (row.role !== "admin" && row.role !== "viewer") return { ok: false, reason: "forbidden", role: row.role };
  return { ok: true, viewer: { role: row.role, tokenName: row.name } };
}

/** Check a token typed into /login (or given once as ?token=) before it becomes a cookie. */
export async function checkLoginToken(tokens: DashboardTokens, token: string): Promise<{ ok: true } | { ok: false; message: string }> {
  if (!token) return { ok: false, message: "enter a token" };
  const row = await tokens.authenticate(token);
  if (!row) return { ok: false, message: "unknown or revoked token" };
  if (row.role !== "admin" && row.role !== "viewer")
    return { ok: false, message: `a ${row.role} token cannot open the dashboard: use an admin or viewer token` };
  return { ok: true };
}

const isHttps = (c: Context) => new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";

export function setTokenCookie(c: Context, token: string): void {
  // HttpOnly: page scripts never see it; SameSite=Strict: no other site's form or link carries it.
  setCookie(c, TOKEN_COOKIE, token, { httpOnly: true, sameSite: "Strict", path: "/", maxAge: COOKIE_MAX_AGE_SEC, secure: isHttps(c) });
}

export function clearTokenCookie(c: Context): void {
  deleteCookie(c, TOKEN_COOKIE, { path: "/" });
}

/**
 * Forms change things, so a cross-site page must not be able to submit one. The cookie is
 * SameSite=Strict already; this also holds in open mode, where there is no cookie at all.
 */
export function isSameOrigin(c: Context): boolean {
  const site = c.req.header("sec-fetch-site");
  if (site) return site === "same-origin";
  const origin = c.req.header("origin");
  if (!origin) return false;
  try {
    const host = c.req.header("x-forwarded-host") ?? c.req.header("host") ?? new URL(c.req.url).host;
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** Where to go after a form: only a path on this site (never `//elsewhere`). */
export function safeNext(value: string | undefined, fallback = "/"): string {
  return value?.startsWith("/") && !value.startsWith("//") && !value.startsWith("/\\") ? value : fallback;
}
