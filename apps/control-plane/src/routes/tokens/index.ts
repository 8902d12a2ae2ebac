import { createRoute } from "@hono/zod-openapi";
import { type ROLES, TokenCreatedSchema, TokenCreateSchema, TokenListSchema, TokenParam, TokenSchema } from "@linewatch/contract";
import { insertToken, isUniqueViolation, listActiveTokens, listTokens, revokeToken } from "@linewatch/db";
import { BOOTSTRAP_PREFIX, generateToken, hashToken, type TokenStore } from "../../auth";
import type { AppDeps } from "../../deps";
import { ConflictError, NotFoundError, ValidationError } from "../../errors";
import { createRouter, errorResponses, json, jsonBody } from "../common";

type Row = { id: string; name: string; role: string; createdAt: Date; revokedAt: Date | null };
const view = (t: Row) => ({
  id: t.id,
  name: t.name,
  role: t.role as (typeof ROLES)[number],
  createdAt: t.createdAt.toISOString(),
  revokedAt: t.revokedAt?.toISOString() ?? null,
});

/**
 * API tokens (SPEC §7): admin only. The first token created turns the open demo mode off for good;
 * the last active admin token cannot be revoked (create another first), so no one is locked out.
 */
export function tokenRoutes(deps: AppDeps, store: TokenStore) {
  const app = createRouter();
  const db = deps.database.db;

  app.openapi(
    createRoute({
      method: "post",
      path: "/",
      tags: ["tokens"],
      summary: "Create a token (shown once)",
      request: jsonBody(TokenCreateSchema),
      responses: { 201: json(TokenCreatedSchema, "The token"), ...errorResponses },
    }),
    async (c) => {
      const body = c.req.valid("json");
      if (body.name.startsWith(BOOTSTRAP_PREFIX))
        throw ValidationError.field("name", `${BOOTSTRAP_PREFIX}… is reserved for LINEWATCH_ADMIN_TOKEN`);
      const token = generateToken(body.role);
      const row = await insertToken(db, { name: body.name, role: body.role, hash: hashToken(token).toString("hex") }).catch(
        (e: unknown) => {
          throw isUniqueViolation(e)
            ? new ConflictError(`a token named ${JSON.stringify(body.name)} exists`, [{ field: "name", message: "already exists" }])
            : e;
        },
      );
      store.invalidate();
      return c.json({ ...view(row), token }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags: ["tokens"],
      summary: "List tokens (never their values)",
      responses: { 200: json(TokenListSchema, "Tokens"), ...errorResponses },
    }),
    async (c) => c.json({ tokens: (await listTokens(db)).map(view) }, 200),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/{idOrName}",
      tags: ["tokens"],
      summary: "Revoke a token",
      request: { params: TokenParam },
      responses: { 200: json(TokenSchema, "The revoked token"), ...errorResponses },
    }),
    async (c) => {
      const { idOrName } = c.req.valid("param");
      const active = await listActiveTokens(db);
      const target = active.find((t) => t.id === idOrName || t.name === idOrName);
      if (target?.role === "admin" && active.filter((t) => t.role === "admin").length === 1) {
        throw new ConflictError("this is the last active admin token: create another admin token before revoking it");
      }
      const row = await revokeToken(db, idOrName, new Date(deps.clock.now()));
      if (!row) throw new NotFoundError(`active token ${JSON.stringify(idOrName)}`);
      store.invalidate();
      return c.json(view(row), 200);
    },
  );
  return app;
}
