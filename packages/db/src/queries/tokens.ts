import { and, asc, eq, isNull } from "drizzle-orm";
import type { Db } from "../client";
import { tokens } from "../schema/index";

export type TokenRow = typeof tokens.$inferSelect;

export async function listActiveTokens(db: Db): Promise<TokenRow[]> {
  return db.select().from(tokens).where(isNull(tokens.revokedAt)).orderBy(asc(tokens.name));
}

export async function listTokens(db: Db): Promise<TokenRow[]> {
  return db.select().from(tokens).orderBy(asc(tokens.name));
}

export async function insertToken(db: Db, input: { name: string; role: string; hash: string }): Promise<TokenRow> {
  const [row] = await db.insert(tokens).values(input).returning();
  if (!row) throw new Error("insert returned no row");
  return row;
}

export async function revokeToken(db: Db, idOrName: string, now: Date): Promise<TokenRow | null> {
  const byId = /^[0-9a-f-]{36}$/i.test(idOrName) ? eq(tokens.id, idOrName) : eq(tokens.name, idOrName);
  const [row] = await db
    .update(tokens)
    .set({ revokedAt: now })
    .where(and(byId, isNull(tokens.revokedAt)))
    .returning();
  return row ?? null;
}
