import postgres from "postgres";
import { expect } from "vitest";
import { eventually as poll } from "../helpers/api";

/** What the fault tests need of a control plane: its HTTP API (in-process or a child process). */
export interface Api {
  request(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
}

export interface TableBody {
  route: string;
  version: number;
  mode: string;
  lines: { id: string; name: string; state: string; weight: number }[];
}

export interface LineSpec {
  name: string;
  baseUrl: string;
  tier?: "paid" | "free";
  probeIntervalSec: number;
  timeoutMs?: number;
  routes?: { route: string; weight: number }[];
}

export async function createRoute(cp: Api, name: string, extra: object = {}): Promise<void> {
  const res = await cp.request("/v1/routes", { method: "POST", json: { name, ...extra } });
  expect(res.status, await res.clone().text()).toBe(201);
}

export async function createLines(cp: Api, route: string, specs: LineSpec[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  // A few at a time: each registration reconciles the schedule and republishes its routes.
  const queue = [...specs];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let s = queue.shift(); s; s = queue.shift()) await createOne(s);
    }),
  );
  return ids;

  async function createOne(s: LineSpec) {
    const res = await cp.request("/v1/lines", {
      method: "POST",
      json: {
        name: s.name,
        tier: s.tier ?? "paid",
        protocol: "openai-chat",
        model: "lab-model",
        baseUrl: s.baseUrl,
        routes: s.routes ?? [{ route, weight: 100 }],
        probeIntervalSec: s.probeIntervalSec,
        ...(s.timeoutMs ? { timeoutMs: s.timeoutMs } : {}),
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    ids.set(s.name, ((await res.json()) as { id: string }).id);
  }
}

export async function getTable(cp: Api, route: string): Promise<{ status: number; etag: string | null; body: TableBody | null }> {
  const res = await cp.request(`/v1/tables/${route}`);
  // Read the body either way, so the response is finished before the next request.
  const body = res.status === 200 ? ((await res.json()) as TableBody) : await res.text().then(() => null);
  return { status: res.status, etag: res.headers.get("etag"), body };
}

export const weights = (t: TableBody) => Object.fromEntries(t.lines.map((l) => [l.name, l.weight]));

/** A read-only look into the control plane's database, the way an operator would check it. */
export function inspect(url: string) {
  const sql = postgres(url, { max: 2, onnotice: () => {}, connect_timeout: 5 });
  return {
    sql,
    /** (line, sample, slot) stored more than once: must always be empty. */
    duplicateSlots: () =>
      sql<{ line_id: string; sample_id: string; slot: string; n: number }[]>`
        select line_id, sample_id, slot, count(*)::int as n from probe_results
        where slot is not null group by line_id, sample_id, slot having count(*) > 1`,
    /** Stored results per line name. */
    resultsPerLine: async (since?: Date) => {
      const rows = await sql<{ name: string; n: number }[]>`
        select l.name, count(r.id)::int as n from lines l left join probe_results r
          on r.line_id = l.id ${since ? sql`and r.started_at >= ${since}` : sql``}
        group by l.name`;
      return new Map(rows.map((r) => [r.name, r.n]));
    },
    /** The latest result per (line, sample). */
    lastProbeAt: async () => {
      const rows = await sql<{ line_id: string; sample_id: string; at: Date }[]>`
        select s.line_id, s.sample_id, max(r.started_at) as at from probe_schedule s
          left join probe_results r on r.line_id = s.line_id and r.sample_id = s.sample_id
        group by s.line_id, s.sample_id`;
      return rows;
    },
    events: () =>
      sql<
        {
          id: number;
          kind: string;
          line_id: string | null;
          route_name: string | null;
          reason: string;
          dedupe_key: string | null;
          data: Record<string, unknown>;
        }[]
      >`select id, kind, line_id, route_name, reason, dedupe_key, data from events order by id`,
    health: () =>
      sql<
        { line_id: string; state: string; revision: number; tick_at: Date | null; health: Record<string, unknown> }[]
      >`select line_id, state, revision, tick_at, health from line_health order by line_id`,
    close: () => sql.end({ timeout: 5 }),
  };
}

/** helpers/api.ts's poll, every 200 ms: a fault test's checks are HTTP requests to processes under strain. */
export const eventually = <T>(check: () => Promise<T | undefined | false>, timeoutMs: number, everyMs = 200): Promise<T> =>
  poll(check, timeoutMs, everyMs);

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A fresh database for a fault test: on the machine's PostgreSQL when DATABASE_URL is set (CI's
 * second run), else on a private cluster of the test's own (the PGlite run has no server).
 */
export async function faultDatabase(): Promise<{ url: string; dispose(): Promise<void> }> {
  if (process.env.DATABASE_URL) {
    const { createTestDatabase } = await import("../helpers/test-db");
    const testDb = await createTestDatabase();
    return { url: testDb.url!, dispose: () => testDb.dispose() };
  }
  const { startPrivatePostgres } = await import("../helpers/private-postgres");
  const pg = await startPrivatePostgres();
  return { url: await pg.createDatabase(), dispose: () => pg.dispose() };
}
