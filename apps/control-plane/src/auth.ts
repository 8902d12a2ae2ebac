import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { type TokenRow, ensureToken, listActiveTokens } from "@linewatch/db";
import type { MiddlewareHandler } from "hono";
import type { AppDeps } from "./deps";
import { ApiError } from "./errors";

export const ROLES = ["admin", "viewer", "router"] as const;
export type Role = (typeof ROLES)[number];
/** `open`: no token exists yet (embedded demo); everything but credentials is allowed. */
export type Principal = { role: Role | "open"; tokenName: string | null };

export type AuthEnv = { Variables: { principal: Principal } };

export const hashToken = (token: string) => createHash("sha256").update(token).digest();

export function generateToken(role: Role): string {
  return `lw_${role}_${randomBytes(24).toString("base64url")}`;
}

/** Active tokens, cached briefly so the table endpoint does not hit the database per request. */
export class TokenStore {
  private cache: { at: number; tokens: { row: TokenRow; hash: Buffer }[] } | null = null;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "config">,
    private readonly ttlMs = 5_000,
  ) {}

  invalidate(): void {
    this.cache = null;
  }

  async bootstrap(): Promise<void> {
    const token = this.deps.config.adminToken;
    if (token) await ensureToken(this.deps.database.db, { name: "bootstrap-admin", role: "admin", hash: hashToken(token).toString("hex") });
    this.invalidate();
  }

  private async active() {
    const now = this.deps.clock.now();
    if (!this.cache || now - this.cache.at > this.ttlMs) {
      let rows: TokenRow[];
      try {
        rows = await listActiveTokens(this.deps.database.db);
      } catch (error) {
        // Database down: the tokens known a moment ago still hold (none can be created or revoked
        // meanwhile), so routers keep their tables; ask again in a second.
        if (!this.cache) throw error;
        this.cache.at = now - this.ttlMs + 1_000;
        return this.cache.tokens;
      }
      this.cache = { at: now, tokens: rows.map((row) => ({ row, hash: Buffer.from(row.hash, "hex") })) };
    }
    return this.cache.tokens;
  }

  async isOpen(): Promise<boolean> {
    return (await this.active()).length === 0;
  }

  /** Compare against every active token in constant time, so timing tells nothing about which one is near. */
  async authenticate(token: string): Promise<TokenRow | null> {
    const candidate = hashToken(token);
    let found: TokenRow | null = null;
    for (const t of await this.active()) {
      if (t.hash.length === candidate.length && timingSafeEqual(t.hash, candidate)) found = t.row;
    }
    return found;
  }
}

/** Which roles may call a method+path (SPEC §7): admin everything, viewer reads, router reads tables. */
export function allowedRoles(method: string, path: string): readonly Role[] {
  const read = method === "GET" || method === "HEAD";
  if (path.startsWith("/v1/tables")) return read ? ["admin", "viewer", "router"] : ["admin"];
  if (path.startsWith("/v1/tokens")) return ["admin"];
  return read ? ["admin", "viewer"] : ["admin"];
}

export function authMiddleware(store: TokenStore): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization");
    const bearer = header?.match(/^Bearer\s+(\S+)$/i)?.[1];
    if (!bearer && (await store.isOpen())) {
      c.set("principal", { role: "open", tokenName: null });
      return next();
    }
    if (!bearer) throw new ApiError(401, "unauthorized", "missing bearer token (Authorization: Bearer <token>)");
    const row = await store.authenticate(bearer);
    if (!row) throw new ApiError(401, "unauthorized", "unknown or revoked token");
    const role = row.role as Role;
    if (!allowedRoles(c.req.method, c.req.path).includes(role)) {
      throw new ApiError(403, "forbidden", `a ${role} token may not ${c.req.method} ${c.req.path}`);
    }
    c.set("principal", { role, tokenName: row.name });
    return next();
  };
}
