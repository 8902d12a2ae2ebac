// Seeds a control plane for the dashboard bench: N lines on 5 routes, H hours of probe history at
// 4 probes per line per 45 s, one line in ten truncating for the last hour (in cooldown), a few drained.
import { insertProbeResult } from "@linewatch/db";
import { sql } from "drizzle-orm";
import type { TestControlPlane } from "../../test/helpers/control-plane";

const ROUTES = 5;
const INTERVAL_MS = 45_000;

/** A kept-alive connection the server closed while seeding ran (ECONNRESET): once more, on a new one. */
export async function retried<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch {
    return f();
  }
}

export async function seed(cp: TestControlPlane, opts: { lines: number; hours: number; token: string }): Promise<{ lineIds: string[] }> {
  const { lines: LINES, hours: HOURS, token: ADMIN } = opts;
  const req = async (path: string, method: string, json?: unknown) => {
    const res = await retried(() => cp.request(path, { method, json, token: ADMIN }));
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  for (let r = 0; r < ROUTES; r++) await req("/v1/routes", "POST", { name: `route-${r}` });
  const lineIds: string[] = [];
  for (let i = 0; i < LINES; i++) {
    const name = `line-${String(i).padStart(3, "0")}`;
    const line = await req("/v1/lines", "POST", {
      name,
      tier: i % 3 === 0 ? "free" : "paid",
      protocol: "openai-chat",
      baseUrl: "http://127.0.0.1:9/v1",
      model: "bench-model",
      routes: [{ route: `route-${i % ROUTES}`, weight: 50 + (i % 7) * 10 }],
    });
    lineIds.push(line.id as string);
  }
  // History: every line probes each of the 4 shipped samples every 45 s (spread over the interval);
  // one line in ten goes bad (truncated, fields missing) for the last hour.
  const now = Date.now();
  const cycles = Math.floor((HOURS * 3_600_000) / INTERVAL_MS);
  const db = cp.database.db;
  for (let from = 0; from < LINES; from += 20) {
    const ids = lineIds.slice(from, from + 20);
    await db.execute(sql`
      insert into probe_results (line_id, sample_id, started_at, latency_ms, status, hard_failure, passed, score, components, content_length, content_hash, excerpt, reasons, tokens, trigger)
      select l.id, s.id,
        to_timestamp((${now}::float8 - (${cycles}::int - g) * ${INTERVAL_MS}::float8 + s.k * ${INTERVAL_MS / 4}::float8) / 1000.0),
        250 + (random() * 500)::int, 200, false,
        not bad, case when bad then 55 + random() * 15 else 88 + random() * 12 end,
        jsonb_build_object('length', case when bad then 0.4 else 1 end, 'fields', case when bad then 0.5 + random() * 0.3 else 1 end, 'freshness', 1, 'status', 1, 'latency', 0.9 + random() * 0.1),
        (case when bad then 0.3 else 1 end * (s.k + 1) * 150 * (0.8 + random() * 0.4))::int,
        md5(random()::text), 'A synthetic answer for the dashboard bench.', case when bad then '["failed check: length below 0.5"]'::jsonb else '[]'::jsonb end,
        120, 'schedule'
      from (select id, (right(name, 3)::int % 10 = 0) as sick from lines where id in (${sql.join(
        ids.map((id) => sql`${id}::uuid`),
        sql`, `,
      )})) l
      cross join (select id, (row_number() over (order by name) - 1)::int as k from samples) s
      cross join generate_series(0, ${cycles - 1}::int) g
      cross join lateral (select l.sick and g > ${cycles - 80}::int as bad) b`);
  }
  // Real health for the sick lines: two failed probes through the health machine send them to
  // cooldown, with their events and table versions.
  const sample = ((await req("/v1/samples", "GET")).samples as { id: string }[])[0]!.id;
  for (let i = 0; i < LINES; i += 10) {
    for (let k = 0; k < 2; k++) {
      const stored = await insertProbeResult(db, {
        lineId: lineIds[i]!,
        sampleId: sample,
        startedAt: new Date(Date.now() - 1000 + k),
        latencyMs: 400,
        status: 200,
        errorClass: null,
        hardFailure: false,
        passed: false,
        score: 52,
        components: { length: 0.3, fields: 0.5, freshness: 1, status: 1, latency: 1 },
        checks: [{ name: "minLength", verdict: "fail", detail: "cut" }],
        contentLength: 40,
        contentHash: null,
        excerpt: "cut sh",
        reasons: ["failed check: length below 0.5"],
        tokens: 30,
        slot: null,
        trigger: "schedule",
      });
      if (stored) await cp.engine.health.applyProbe(stored);
    }
  }
  for (let i = 5; i < LINES; i += 40) await req(`/v1/lines/${lineIds[i]}`, "PATCH", { adminState: "drained" });
  return { lineIds };
}
