// API tokens (docs/roles.md): admin only.
import { z } from "@hono/zod-openapi";
import { NameSchema } from "./common";

export const ROLES = ["admin", "viewer", "router"] as const;
export type Role = (typeof ROLES)[number];

export const TokenCreateSchema = z.strictObject({ name: NameSchema, role: z.enum(ROLES) }).openapi("TokenCreate");
export const TokenSchema = z
  .object({ id: z.string(), name: z.string(), role: z.enum(ROLES), createdAt: z.string(), revokedAt: z.string().nullable() })
  .openapi("Token");
export const TokenCreatedSchema = TokenSchema.extend({
  token: z.string().openapi({ description: "Shown once; only its hash is stored" }),
}).openapi("TokenCreated");
export const TokenListSchema = z.object({ tokens: z.array(TokenSchema) });
export const TokenParam = z.object({ idOrName: z.string().openapi({ param: { name: "idOrName", in: "path" } }) });

export type TokenCreate = z.infer<typeof TokenCreateSchema>;
export type TokenResponse = z.infer<typeof TokenSchema>;
export type TokenCreated = z.infer<typeof TokenCreatedSchema>;
export type TokenList = z.infer<typeof TokenListSchema>;
