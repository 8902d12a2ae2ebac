import { type Command, requireArg, withFlagHints } from "../command";
import { UsageError } from "../errors";
import { table, timestamp } from "../format";
import type { Token, TokenCreated } from "../types";

export const tokenCommands: Command[] = [
  {
    name: "tokens create",
    args: "NAME",
    min: 1,
    max: 1,
    summary: "create an API token (printed once; only its hash is stored)",
    details: "The first token closes the open demo mode: from then on every call needs a token.",
    options: ["role"],
    async run(ctx, [name]) {
      if (ctx.values.role === undefined) throw new UsageError("tokens create: --role admin|viewer|router is required");
      const created = await withFlagHints(ctx.api.post<TokenCreated>("/v1/tokens", { name, role: ctx.values.role }), {
        name: "NAME",
        role: "--role",
      });
      if (ctx.json) return ctx.printJson(created);
      ctx.print(created.token);
      ctx.warn(`created ${created.role} token ${created.name}; it is shown only this once`);
    },
  },
  {
    name: "tokens list",
    max: 0,
    summary: "list tokens (never their values)",
    async run(ctx) {
      const list = await ctx.api.get<{ tokens: Token[] }>("/v1/tokens");
      ctx.output(list, () =>
        table(
          ["NAME", "ROLE", "CREATED", "REVOKED", "ID"],
          list.tokens.map((t) => [t.name, t.role, timestamp(t.createdAt), t.revokedAt ? timestamp(t.revokedAt) : "", t.id]),
        ),
      );
    },
  },
  {
    name: "tokens revoke",
    args: "TOKEN",
    min: 1,
    max: 1,
    summary: "revoke a token (by name or id)",
    async run(ctx, [ref]) {
      const token = await ctx.api.delete<Token>(`/v1/tokens/${encodeURIComponent(requireArg(ref))}`);
      ctx.output(token, () => `revoked token ${token.name}`);
    },
  },
];
