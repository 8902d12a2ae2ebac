// API tokens (docs/roles.md): created (shown once, stored hashed), listed, revoked. The first token created
// turns the open demo mode off for good; the last active admin token cannot be revoked (create another
// first), so no one is locked out.
import type { Role, TokenCreate, TokenCreated, TokenResponse } from "@linewatch/contract";
import { insertToken, listActiveTokens, listTokens, revokeToken, type TokenRow } from "@linewatch/db";
import { BOOTSTRAP_PREFIX, generateToken, hashToken, type TokenStore } from "../auth";
import type { AppDeps } from "../deps";
import { ConflictError, NotFoundError, ValidationError } from "../errors";
import { duplicateName } from "./duplicate-name";

const view = (t: TokenRow): TokenResponse => ({
  id: t.id,
  name: t.name,
  // Only ROLES are ever written (TokenCreateSchema, bootstrap): the column is text.
  role: t.role as Role,
  createdAt: t.createdAt.toISOString(),
  revokedAt: t.revokedAt?.toISOString() ?? null,
});

export class TokenService {
  constructor(
    private readonly deps: AppDeps,
    /** The cache the API authenticates with: a change here is seen there at once. */
    private readonly store: TokenStore,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  async list(): Promise<TokenResponse[]> {
    return (await listTokens(this.db)).map(view);
  }

  async create(input: TokenCreate): Promise<TokenCreated> {
    if (input.name.startsWith(BOOTSTRAP_PREFIX))
      throw ValidationError.field("name", `${BOOTSTRAP_PREFIX}… is reserved for LINEWATCH_ADMIN_TOKEN`);
    const token = generateToken(input.role);
    const row = await insertToken(this.db, { name: input.name, role: input.role, hash: hashToken(token).toString("hex") }).catch(
      duplicateName(`a token named ${JSON.stringify(input.name)} exists`),
    );
    this.store.invalidate();
    return { ...view(row), token };
  }

  async revoke(idOrName: string): Promise<TokenResponse> {
    const active = await listActiveTokens(this.db);
    const target = active.find((t) => t.id === idOrName || t.name === idOrName);
    if (target?.role === "admin" && active.filter((t) => t.role === "admin").length === 1) {
      throw new ConflictError("this is the last active admin token: create another admin token before revoking it");
    }
    const row = await revokeToken(this.db, idOrName, new Date(this.deps.clock.now()));
    if (!row) throw new NotFoundError(`active token ${JSON.stringify(idOrName)}`);
    this.store.invalidate();
    return view(row);
  }

  /** Open (demo) mode: no token has ever been created. */
  isOpen(): Promise<boolean> {
    return this.store.isOpen();
  }

  /** Read the token table again at the next check (a change made behind the API's back). */
  invalidate(): void {
    this.store.invalidate();
  }
}
