import type { Engine } from "../../engine";
import type { RegistrySnapshot } from "../../registry-cache";
import type { ServedTable } from "../../tables/publisher";

/** What `GET /v1/tables/:route` answers once the route has a served table: the same for the Hono route and the fast path. */
export type TableAnswer =
  | { status: 200; headers: Record<string, string>; body: Buffer<ArrayBuffer> }
  | { status: 304; headers: Record<string, string>; body: null };

/** Whether `If-None-Match` (`"42"`, W/"42", or a list) names this version. */
export function namesVersion(header: string | undefined, served: ServedTable): boolean {
  if (!header) return false;
  if (header === served.etag) return true; // what routers send: the ETag they were given
  const version = String(served.table.version);
  return header.split(",").some((t) => t.trim().replace(/^W\//, "").replace(/^"|"$/g, "") === version);
}

/**
 * The answer for a route's served table: a 304 when `If-None-Match` names its version (after waiting
 * up to `waitSec` for a newer one), else the body the principal gets (credentials for a router token).
 */
export async function tableAnswer(
  engine: Engine,
  route: string,
  first: { served: ServedTable; snapshot: RegistrySnapshot },
  request: { router: boolean; ifNoneMatch: string | undefined; waitSec: number | undefined; signal?: AbortSignal },
): Promise<TableAnswer> {
  if (!request.waitSec || !namesVersion(request.ifNoneMatch, first.served)) return tableAnswerNow(engine, first, request);
  await engine.publisher.waitForChange(route, first.served.table.version, request.waitSec * 1000, request.signal);
  const served = engine.publisher.servedTable(route) ?? first.served;
  return tableAnswerNow(engine, { served, snapshot: await engine.registry.get() }, request);
}

/** The answer for this version of the table, without waiting for a newer one. */
export function tableAnswerNow(
  engine: Engine,
  { served, snapshot }: { served: ServedTable; snapshot: RegistrySnapshot },
  request: { router: boolean; ifNoneMatch: string | undefined },
): TableAnswer {
  if (namesVersion(request.ifNoneMatch, served))
    return { status: 304, headers: { etag: served.etag, "cache-control": "no-cache" }, body: null };
  return {
    status: 200,
    headers: { etag: served.etag, "cache-control": "no-cache", "content-type": "application/json" },
    body: request.router ? engine.publisher.credentialedBody(served, snapshot) : served.body,
  };
}
