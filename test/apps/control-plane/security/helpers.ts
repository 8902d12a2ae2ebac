import type { Database } from "@linewatch/db";
import { sql } from "drizzle-orm";
import { expect } from "vitest";
import type { TestControlPlane } from "../../../helpers/control-plane";

export type Role = "admin" | "viewer" | "router";
export type Tokens = Record<Role, string>;

export interface Operation {
  method: string;
  /** As /openapi.json names it, e.g. /v1/lines/{id}. */
  path: string;
}

/** Every operation /openapi.json describes, or (`v1Only`, the default) those of the /v1 API. */
export async function openApiOperations(cp: TestControlPlane, { v1Only = true } = {}): Promise<Operation[]> {
  const res = await cp.request("/openapi.json");
  expect(res.status).toBe(200);
  const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths)
    .filter(([path]) => !v1Only || path.startsWith("/v1/"))
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path })));
}

/** Create one token per role with the given admin token (or in open mode for the first). */
export async function createTokens(cp: TestControlPlane, prefix = "t"): Promise<Tokens> {
  const make = async (role: Role, token?: string) => {
    const res = await cp.request("/v1/tokens", { method: "POST", json: { name: `${prefix}-${role}`, role }, ...(token ? { token } : {}) });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { token: string }).token;
  };
  const admin = await make("admin");
  return { admin, viewer: await make("viewer", admin), router: await make("router", admin) };
}

/** The docs/api.md envelope with the given status and code. */
export async function expectEnvelope(
  res: Response,
  status: number,
  code: string,
): Promise<{ error: { code: string; message: string; details: unknown[] } }> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as { error: { code: string; message: string; details: unknown[] } };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(Array.isArray(body.error.details)).toBe(true);
  return body;
}

/** A 32-byte key as 64 hex characters. */
export const hexKey = (fill: string) => fill.repeat(64).slice(0, 64);

/** Rows of a raw query, whichever driver (postgres.js returns an array, PGlite `{ rows }`). */
export async function queryRows<T = Record<string, unknown>>(database: Database, text: string): Promise<T[]> {
  const result = (await database.db.execute(sql.raw(text))) as unknown;
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}
