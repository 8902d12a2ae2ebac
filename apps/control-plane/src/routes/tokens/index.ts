// /v1/tokens (admin only, auth.ts): schema in, one service call (services/tokens.ts), JSON out.
import { createRoute } from "@hono/zod-openapi";
import { TokenCreatedSchema, TokenCreateSchema, TokenListSchema, TokenParam, TokenSchema } from "@linewatch/contract";
import type { Services } from "../../services/index";
import { createRouter, errorResponses, json, jsonBody } from "../common";

const tags = ["tokens"];

const create = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Create a token (shown once)",
  request: jsonBody(TokenCreateSchema),
  responses: { 201: json(TokenCreatedSchema, "The token"), ...errorResponses },
});
const list = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List tokens (never their values)",
  responses: { 200: json(TokenListSchema, "Tokens"), ...errorResponses },
});
const revoke = createRoute({
  method: "delete",
  path: "/{idOrName}",
  tags,
  summary: "Revoke a token",
  request: { params: TokenParam },
  responses: { 200: json(TokenSchema, "The revoked token"), ...errorResponses },
});

export function tokenRoutes({ tokens }: Pick<Services, "tokens">) {
  return createRouter()
    .openapi(create, async (c) => c.json(await tokens.create(c.req.valid("json")), 201))
    .openapi(list, async (c) => c.json({ tokens: await tokens.list() }, 200))
    .openapi(revoke, async (c) => c.json(await tokens.revoke(c.req.valid("param").idOrName), 200));
}
