import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import type { HttpBindings } from "@hono/node-server";
import type { Role } from "@linewatch/contract";
import { insertToken, isUniqueViolation, listTokens, revokeToken, type TokenRow } from "@linewatch/db";

/** A token as stored (its hash, never its value). */
export type StoredToken = TokenRow;

import type { Context, MiddlewareHandler } from "hono";
import type { AppDeps } from "./deps";
import { ApiError } from "./errors";

export { ROLES, type Role } from "@linewatch/contract";
/** `open`: no token was ever created (embedded demo); everything but credentials is allowed. */
export type Principal = { role: Role | "open"; tokenName: string | null };

/** Bindings: what @hono/node-server passes (absent under app.request in tests). */
export type AuthEnv = { Bindings: Partial<HttpBindings>; Variables: { principal: Principal } };

/**
 * A request header. Under @hono/node-server it is read from Node's own parsed headers: asking the
 * Fetch Request for one makes the server build a Headers object of all of them, which cost more than
 * the rest of a table answer.
 */
export function requestHeader(c: Context<AuthEnv>, name: string): string | undefined {
  const value = c.env?.incoming?.headers[name];
  if (typeof value === "string") return value;
  return c.env?.incoming ? value?.join(", ") : c.req.header(name);
}

/** Tokens named so are managed from LINEWATCH_ADMIN_TOKEN; the API does not hand the prefix out. */
export const BOOTSTRAP_PREFIX = "bootstrap-admin";

/** sha256 is enough: tokens are 24 random bytes, so there is nothing to brute-force or salt against. */
export const hashToken = (token: string): Buffer => hash("sha256", token, "buffer");

export function generateToken(role: Role): string {
  return `lw_${role}_${randomBytes(24).toString("base64url")}`;
}

interface TokenCache {
  at: number;
  /** Some token exists or existed: the API is closed for good (revoking them all does not reopen it). */
  closed: boolean;
  active: TokenRow[];
  /** Active tokens by the hex sha256 of the token. */
  byHash: Map<string, { row: TokenRow; hash: Buffer }>;
}

/** Tokens, cached briefly so the table endpoint does not hit the database per request. */
export class TokenStore {
  private cache: TokenCache | null = null;
  /** The read under way, shared by every caller meanwhile. */
  private loading: Promise<TokenCache> | null = null;
  /** Moves on each invalidate, so a read that began before it is not cached. */
  private generation = 0;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "config">,
    /** A token revoked on another replica stops working here within this long. */
    private readonly ttlMs = 5_000,
  ) {}

  get metricsPublic(): boolean {
    return this.deps.config.metricsPublic;
  }

  invalidate(): void {
    this.cache = null;
    this.loading = null;
    this.generation++;
  }

  /**
   * Store LINEWATCH_ADMIN_TOKEN (hashed). A new value revokes the previous bootstrap token, so
   * changing the variable rotates it; a value that was revoked through the API stays revoked.
   */
  async bootstrap(): Promise<void> {
    const token = this.deps.config.adminToken;
    if (!token) return;
    const db = this.deps.database.db;
    const hash = hashToken(token).toString("hex");
    const all = await listTokens(db);
    if (!all.some((t) => t.hash === hash)) {
      await insertToken(db, { name: `${BOOTSTRAP_PREFIX}-${hash.slice(0, 8)}`, role: "admin", hash }).catch((e: unknown) => {
        if (!isUniqueViolation(e)) throw e; // another replica stored it first
      });
      const now = new Date(this.deps.clock.now());
      for (const t of all) if (t.name.startsWith(BOOTSTRAP_PREFIX) && !t.revokedAt) await revokeToken(db, t.id, now);
    }
    this.invalidate();
  }

  /**
   * The cached tokens, read again when older than the TTL. One read at a time: when the cache expires
   * (or a replica restarts) under thousands of table polls, they all wait on the same query instead
   * of each sending its own (docs/tables.md#serving).
   */
  private load(): Promise<TokenCache> | TokenCache {
    const now = this.deps.clock.now();
    if (this.cache && now - this.cache.at <= this.ttlMs) return this.cache;
    if (!this.loading) {
      const generation = this.generation;
      this.loading = this.read(now, generation).finally(() => {
        if (this.generation === generation) this.loading = null;
      });
    }
    return this.loading;
  }

  private async read(now: number, generation: number): Promise<TokenCache> {
    let rows: TokenRow[];
    try {
      rows = await listTokens(this.deps.database.db);
    } catch (error) {
      // Database down: the tokens known a moment ago still hold (none can be created or revoked
      // meanwhile), so routers keep their tables; ask again in a second.
      if (!this.cache) throw error;
      this.cache.at = now - this.ttlMs + 1_000;
      return this.cache;
    }
    const active = rows.filter((r) => !r.revokedAt);
    const cache: TokenCache = {
      at: now,
      closed: rows.length > 0,
      active,
      byHash: new Map(active.map((row) => [row.hash.toLowerCase(), { row, hash: Buffer.from(row.hash, "hex") }])),
    };
    // A change made while this read was on its way (invalidate) is not in it: the next call reads again.
    if (this.generation === generation) this.cache = cache;
    return cache;
  }

  /** Open (demo) mode: no token has ever been created. */
  async isOpen(): Promise<boolean> {
    return !(await this.load()).closed;
  }

  async activeTokens(): Promise<TokenRow[]> {
    return (await this.load()).active;
  }

  /**
   * One lookup by the token's sha256, whatever the number of tokens, then a constant-time comparison
   * (docs/roles.md). The lookup's timing can only tell how the hash of a guess compares to stored hashes,
   * which says nothing about a token (that would take inverting sha256 on 24 random bytes).
   */
  async authenticate(token: string): Promise<TokenRow | null> {
    const cache = this.load();
    return this.match(cache instanceof Promise ? await cache : cache, token);
  }

  /**
   * The token's row when the cache is fresh, in the same turn (the table listener's accept path);
   * `undefined` when the cache must be read first (then call authenticate).
   */
  authenticateNow(token: string): TokenRow | null | undefined {
    const cache = this.load();
    return cache instanceof Promise ? undefined : this.match(cache, token);
  }

  /** Whether no token was ever created, when the cache is fresh; `undefined` when it must be read first. */
  isOpenNow(): boolean | undefined {
    const cache = this.load();
    return cache instanceof Promise ? undefined : !cache.closed;
  }

  private match(cache: TokenCache, token: string): TokenRow | null {
    const candidate = hashToken(token);
    const found = cache.byHash.get(candidate.toString("hex"));
    return found && timingSafeEqual(found.hash, candidate) ? found.row : null;
  }
}

/**
 * Paths anyone may call, token or not (docs/roles.md is about data; these carry none):
 * liveness and readiness (load balancers and orchestrators send no token), the API description and
 * its docs page (the same as the source), and /metrics unless LINEWATCH_METRICS_PUBLIC=false
 * (Prometheus scrapes without a token by default; metrics hold names and counts, never credentials).
 */
export function isPublicPath(path: string, metricsPublic: boolean): boolean {
  if (path === "/healthz" || path === "/readyz" || path === "/openapi.json" || path === "/docs") return true;
  return path === "/metrics" && metricsPublic;
}

/**
 * Which roles may call a method+path (docs/roles.md): admin everything, viewer every read (and /metrics
 * when it is not public, and a replay, which only reads), router only the tables. Tokens and webhook sinks are admin's alone.
 * Outcome reports are the routers' alone (docs/live-evidence.md): an admin or viewer token pushing them is a
 * misconfigured router, and a router checks its token's role with an empty report at start.
 */
export function allowedRoles(method: string, path: string): readonly Role[] {
  const read = method === "GET" || method === "HEAD";
  if (path === "/v1/outcomes") return method === "POST" ? ["router"] : [];
  if (path === "/v1/tables" || path.startsWith("/v1/tables/")) return read ? ["admin", "viewer", "router"] : ["admin"];
  if (path === "/v1/tokens" || path.startsWith("/v1/tokens/")) return ["admin"];
  // A sink's URL may carry a credential (Slack's do): reading them is admin's too.
  if (path === "/v1/webhooks" || path.startsWith("/v1/webhooks/")) return ["admin"];
  // A replay is a POST for its body, but only reads (docs/replay.md).
  if (path === "/v1/replay") return ["admin", "viewer"];
  return read ? ["admin", "viewer"] : ["admin"];
}

export function bearerToken(header: string | undefined): string | null {
  return header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1] ?? null;
}

/** On /v1/* and /metrics (the dashboard reads its own cookie, dashboard/session.ts). Public paths pass. */
export function authMiddleware(store: TokenStore): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const path = c.req.path;
    if (isPublicPath(path, store.metricsPublic)) {
      c.set("principal", { role: "open", tokenName: null });
      return next();
    }
    const token = bearerToken(requestHeader(c, "authorization"));
    if (!token && (await store.isOpen())) {
      c.set("principal", { role: "open", tokenName: null });
      return next();
    }
    const challenge = 'Bearer realm="linewatch"';
    if (!token) {
      c.header("WWW-Authenticate", challenge);
      throw new ApiError(401, "unauthorized", "missing token (Authorization: Bearer <token>)");
    }
    const row = await store.authenticate(token);
    if (!row) {
      c.header("WWW-Authenticate", challenge);
      throw new ApiError(401, "unauthorized", "unknown or revoked token");
    }
    const role = row.role as Role;
    if (!allowedRoles(c.req.method, path).includes(role)) {
      throw new ApiError(403, "forbidden", `a ${role} token may not ${c.req.method} ${path}`);
    }
    c.set("principal", { role, tokenName: row.name });
    return next();
  };
}
