import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mulberry32, type ReplayReport } from "@linewatch/core";
import { probeResults, replayResultPages, replayTableCounts } from "@linewatch/db";
import { type Lab, startLab } from "@linewatch/lab";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CopyResultParser,
  copyChunks,
  copyResultBatches,
  copyStatement,
  postgresClient,
} from "../../../apps/control-plane/src/replay/copy-results";
import { runReplay } from "../../../apps/control-plane/src/replay/run-replay";
import { createLine, createRoute } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { type FaultWindow, recordHistory } from "../../helpers/history";
import { ManualClock } from "../../helpers/manual-clock";
import { runCli } from "../cli/run-cli";

// A recorded history: three lines on one route, probed by the real prober against the lab under a
// manual clock, with known fault windows. Then replays of it, which must never write.
const MIN = 60_000;
const STEP = 20_000;
const SPAN = 90 * MIN;
const INTERVAL_SEC = 60;
/** [line, mode, from min, to min] */
const FAULTS = [
  ["paid-c", "errors", 15, 27],
  ["free-b", "errors", 35, 45],
  ["paid-c", "truncate", 60, 70],
] as const satisfies readonly FaultWindow[];

let cp: TestControlPlane;
let lab: Lab;
let from: number;
let to: number;
const ids = new Map<string, string>();

beforeAll(async () => {
  lab = await startLab({ lines: [{ name: "paid-a" }, { name: "paid-c" }, { name: "free-b" }] });
  const clock = new ManualClock();
  cp = await startTestControlPlane({ clock, rng: mulberry32(13) });
  await createRoute(cp, "chat");
  for (const [name, tier] of [
    ["paid-a", "paid"],
    ["paid-c", "paid"],
    ["free-b", "free"],
  ] as const) {
    const line = await createLine(cp, {
      name,
      tier,
      baseUrl: lab.baseUrl(name),
      routes: [{ route: "chat", weight: 100 }],
      probeIntervalSec: INTERVAL_SEC,
    });
    ids.set(name, line.id);
  }
  ({ from, to } = await recordHistory(cp, lab, clock, { spanMs: SPAN, stepMs: STEP, faults: FAULTS, warmUpMs: 2 * INTERVAL_SEC * 1000 }));
}, 120_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
});

async function replay(body: Record<string, unknown>): Promise<ReplayReport> {
  const res = await cp.request("/v1/replay", {
    method: "POST",
    json: { from: new Date(from).toISOString(), to: new Date(to).toISOString(), ...body },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as ReplayReport;
}

/** A timeline's points with those at the same moment merged into the last (a state and its weight change together). */
function settle(points: ReplayReport["timelines"][number]["actual"]) {
  const out: { at: number; state: string; factor: number }[] = [];
  for (const p of points) {
    const at = Date.parse(p.at);
    if (out.at(-1)?.at === at) out.pop();
    out.push({ at, state: p.state, factor: p.factor });
  }
  return out;
}

/** Finish times of a line's failed probes within [a, b) minutes of the history, in order. */
async function failuresOf(line: string, a: number, b: number): Promise<number[]> {
  const rows = await cp.database.db
    .select()
    .from(probeResults)
    .where(eq(probeResults.lineId, ids.get(line) ?? ""))
    .orderBy(asc(probeResults.startedAt));
  return rows
    .filter((r) => !r.passed && r.startedAt.getTime() >= from - 1 + a * MIN && r.startedAt.getTime() < from - 1 + b * MIN)
    .map((r) => r.startedAt.getTime() + r.latencyMs)
    .sort((x, y) => x - y);
}

describe("policy replay over a recorded history", () => {
  it("with the current policy reproduces each line's recorded states and weights, each within one scheduler tick", async () => {
    for (const name of ids.keys()) {
      const report = await replay({ timeline: name });
      const t = report.timelines.find((x) => x.line === name);
      expect(t).toBeDefined();
      const actual = settle(t?.actual ?? []);
      const proposed = settle(t?.proposed ?? []);
      expect(
        proposed.map((p) => [p.state, p.factor]),
        name,
      ).toEqual(actual.map((p) => [p.state, p.factor]));
      for (const [i, p] of proposed.entries())
        expect(Math.abs(p.at - (actual[i]?.at ?? 0)), `${name} change ${i}`).toBeLessThanOrEqual(STEP);
      // The faulty lines did go down and come back: the comparison is not of two empty timelines.
      if (name !== "paid-a") expect(actual.some((p) => p.state === "cooldown")).toBe(true);
    }
  }, 60_000);

  it("with the current policy publishes the recorded number of table versions, and every line carries the recorded share", async () => {
    const report = await replay({});
    const route = report.routes.find((r) => r.name === "chat");
    expect(route?.proposed.versions).toBe(route?.actual.versions);
    expect(route?.actual.versions).toBeGreaterThan(6);
    for (const line of report.lines) {
      expect(Math.abs(line.proposed.meanShare - line.actual.meanShare), line.name).toBeLessThan(0.01);
      expect(line.proposed.cooldowns.length, line.name).toBe(line.actual.cooldowns.length);
    }
    expect(report.episodes.map((e) => e.change)).toEqual(["same", "same", "same"]);
    expect(report.notes.join(" ")).toMatch(/not re-checked.*content is not stored/);
  }, 60_000);

  it("a stricter and a looser policy move each episode's cooldown to the failed probe the policy waits for", async () => {
    const strict = await replay({ policy: { failCount: 1, hardFailCount: 1 } });
    const loose = await replay({ policy: { hardFailCount: 6 } });
    expect(strict.episodes).toHaveLength(FAULTS.length);
    expect(loose.episodes).toHaveLength(FAULTS.length);
    // Hand-checked rule: live (its confirming re-probes in the history) goes down at an episode's 4th
    // failed probe for hard failures (errors: hardFailCount 4) and at its 2nd for content failures
    // (truncate: failCount 2); the strict policy at its 1st; the loose one (hardFailCount 6) at the
    // 6th of hard failures and where live did for content ones. A change is "earlier"/"later" when
    // that is more than 5 s away (the history's clock moves in 20 s steps).
    for (const [i, [line, mode, a, b]] of FAULTS.entries()) {
      const failures = await failuresOf(line, a, b + 1);
      const actual = failures[mode === "errors" ? 3 : 1] ?? 0;
      const first = failures[0] ?? 0;
      const looseAt = mode === "errors" ? (failures[5] ?? 0) : actual;
      const s = strict.episodes[i];
      const l = loose.episodes[i];
      expect(s?.line).toBe(line);
      expect(s?.actual.downAt).toBe(new Date(actual).toISOString());
      expect(s?.proposed.downAt).toBe(new Date(first).toISOString());
      expect(s?.change).toBe(actual - first > 5_000 ? "earlier" : "same");
      expect(l?.proposed.downAt).toBe(new Date(looseAt).toISOString());
      expect(l?.change).toBe(looseAt - actual > 5_000 ? "later" : "same");
    }
    // This seed's history, checked by hand against the failures above (the truncation's first two
    // failures are a slot apart: the samples keep their phases, 15 s apart in the 60 s interval).
    expect(strict.episodes.map((e) => e.change)).toEqual(["earlier", "earlier", "earlier"]);
    expect(strict.badEpisodeShare.change).toBeLessThan(0);
    expect(loose.summary.later).toBeGreaterThanOrEqual(1);
    expect(loose.badEpisodeShare.change).toBeGreaterThan(0);
  }, 60_000);

  it("gives byte-identical reports for the same history and policy", async () => {
    const body = {
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      policy: { failCount: 3, weights: { latency: 40 } },
      timeline: "paid-c",
    };
    const a = await (await cp.request("/v1/replay", { method: "POST", json: body })).text();
    const b = await (await cp.request("/v1/replay", { method: "POST", json: body })).text();
    expect(a.length).toBeGreaterThan(1000);
    expect(b).toBe(a);
  }, 60_000);

  it("never writes: row counts and the timeline are the same after replays", async () => {
    const before = await replayTableCounts(cp.database.db);
    const eventsBefore = await (await cp.request("/v1/events?limit=500")).text();
    await replay({ policy: { failCount: 1, cooldownBaseMs: 60_000 } });
    await replay({});
    expect(await replayTableCounts(cp.database.db)).toEqual(before);
    expect(await (await cp.request("/v1/events?limit=500")).text()).toBe(eventsBefore);
    expect(before.probe_results).toBeGreaterThan(1000);
  }, 60_000);

  it("streams progress and then the report as NDJSON", async () => {
    const res = await cp.request("/v1/replay", {
      method: "POST",
      headers: { accept: "application/x-ndjson" },
      json: { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
    });
    expect(res.status).toBe(200);
    const lines = (await res.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toHaveProperty("progress");
    expect(lines.at(-1)).toHaveProperty("report");
  }, 60_000);

  it("answers bad input with a 400 naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ policy: { failCountt: 3 } }, "policy.failCountt"],
      [{ policy: { failCount: 0 } }, "policy.failCount"],
      [{ policy: { degradedFloor: 90 } }, "policy.degradedFloor"],
      [{ policy: { weights: { length: -1 } } }, "policy.weights.length"],
      [{ policy: { passScore: 120 } }, "policy.passScore"],
      [{ lines: ["nope"] }, "lines.0"],
      [{ routes: ["nope"] }, "routes.0"],
      [{ from: new Date(to + 60 * MIN).toISOString(), to: new Date(to + 120 * MIN).toISOString() }, "from"],
      [{ from: new Date(from - 40 * 86_400_000).toISOString() }, "from"],
      [{ from: "yesterday" }, "from"],
      [{ since: "forever" }, "since"],
    ];
    for (const [body, field] of cases) {
      const res = await cp.request("/v1/replay", { method: "POST", json: { to: new Date(to).toISOString(), ...body } });
      const text = await res.text();
      expect(res.status, `${JSON.stringify(body)}: ${text}`).toBe(400);
      const e = JSON.parse(text) as { error: { details: { field?: string }[] } };
      expect(
        e.error.details.map((d) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
  }, 60_000);

  it("linewatch replay --policy FILE prints the episodes an operator acts on, with progress on stderr", async () => {
    const dir = mkdtempSync(join(tmpdir(), "replay-"));
    writeFileSync(join(dir, "stricter.yaml"), "failCount: 1\nhardFailCount: 1\ncooldownBaseMs: 600000\n");
    const argv = [
      "replay",
      "--url",
      cp.url,
      "--from",
      new Date(from).toISOString(),
      "--to",
      new Date(to).toISOString(),
      "--policy",
      "stricter.yaml",
    ];
    const out = await runCli(argv, { cwd: dir });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/policy: cooldownBaseMs=600000 failCount=1/);
    expect(out.stdout).toMatch(/paid-c .*earlier \(20 s\)/);
    expect(out.stdout).toMatch(/note: Expectations are not re-checked/);
    expect(out.stderr).toMatch(/replay: \d+\/\d+ results/);
    writeFileSync(join(dir, "bad.yaml"), "failCount: 1\ncoolDown: 5\n");
    const bad = await runCli([...argv.slice(0, -1), "bad.yaml"], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/policy\.coolDown/);
  }, 60_000);

  it("the dashboard's replay view draws a line's actual and proposed weight and the per-route summary", async () => {
    const q = (policy: string) =>
      `/replay?${new URLSearchParams({ from: new Date(from).toISOString(), to: new Date(to).toISOString(), line: "paid-c", policy })}`;
    const res = await cp.request(q("failCount: 1\nhardFailCount: 1"));
    const html = await res.text();
    expect(res.status, html.slice(0, 500)).toBe(200);
    const paths = [...html.matchAll(/<path d="(M[^"]+)"[^>]*class="(actual|proposed)"/g)].map((m) => [m[2], m[1]]);
    expect(paths.map((p) => p[0])).toEqual(["actual", "proposed"]);
    // Both go to 0 (the cooldowns) and back: the step paths reach the chart's bottom edge.
    for (const [, d] of paths) expect(d).toMatch(/V112\.0/);
    expect(html).toMatch(/<td>chat<\/td>/);
    expect(html).toMatch(/earlier \(20 s\)/);
    const bad = await cp.request(q("failCount: 0"));
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/policy\.failCount/);
  }, 60_000);

  it("stops between pages when its signal aborts (the API passes the request's, which a client disconnect aborts)", async () => {
    const snapshot = await cp.engine.registry.get();
    const range = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
    const seen: { done: number; total: number }[] = [];
    const ac = new AbortController();
    const run = runReplay(cp.engine.deps, snapshot, range, {
      pageSize: 100,
      signal: ac.signal,
      onProgress: (p) => {
        seen.push(p);
        if (p.done >= 200) ac.abort();
      },
    });
    await expect(run).rejects.toThrow(/abort/i);
    const last = seen.at(-1);
    expect(last?.done).toBe(200);
    expect(last?.total).toBeGreaterThan(1000);
    // Over HTTP: a client that goes away after the first line leaves a server that answers.
    const client = new AbortController();
    const res = await cp.request("/v1/replay", {
      method: "POST",
      headers: { accept: "application/x-ndjson" },
      json: range,
      signal: client.signal,
    });
    const reader = res.body?.getReader();
    await reader?.read();
    client.abort();
    expect((await cp.request("/healthz")).status).toBe(200);
  }, 60_000);

  it("reads the same results from PostgreSQL's COPY stream as from keyset pages, cut anywhere", async (ctx) => {
    const client = postgresClient(cp.database);
    if (client === null) return ctx.skip(); // PGlite has no COPY stream: it reads keyset pages
    const range = { from, to, lineIds: null };
    for (const rescoring of [false, true]) {
      const pages: unknown[] = [];
      for await (const page of replayResultPages(
        cp.database.db,
        { from: new Date(from), to: new Date(to), lineIds: null },
        { withComponents: rescoring },
      ))
        pages.push(...page);
      // Without re-scoring the COPY does not read the checks (nothing but re-scoring uses the verdict).
      const expected = rescoring ? pages : pages.map((r) => ({ ...(r as object), failedCheck: false }));
      const copied: unknown[] = [];
      for await (const batch of copyResultBatches(client, range, { rescoring })) copied.push(...batch);
      expect(copied.length).toBeGreaterThan(500);
      expect(copied).toEqual(expected);
      if (rescoring) expect(copied.some((r) => (r as { failedCheck: boolean }).failedCheck)).toBe(true);
      // The parser keeps a row cut across chunks: the same bytes a byte at a time give the same rows.
      const raw: Buffer[] = [];
      for await (const chunk of copyChunks(client, copyStatement(range, rescoring))) raw.push(chunk);
      const bytes = Buffer.concat(raw);
      const parser = new CopyResultParser(rescoring);
      const byByte: unknown[] = [];
      for (let i = 0; i < bytes.length; i++) byByte.push(...parser.push(bytes.subarray(i, i + 1)));
      expect(parser.complete).toBe(true);
      expect(byByte).toEqual(expected);
    }
    // Only the lines asked for.
    const paidC = ids.get("paid-c") ?? "";
    const some: unknown[] = [];
    for await (const batch of copyResultBatches(client, { from, to, lineIds: [paidC] })) some.push(...batch);
    expect(some.length).toBeGreaterThan(100);
    expect(some.every((r) => (r as { lineId: string }).lineId === paidC)).toBe(true);
    expect(() => copyStatement({ from, to, lineIds: ["x'; drop table lines; --"] }, false)).toThrow(/not a line id/);
  }, 60_000);

  it("gives the same report whether it streams a COPY or reads keyset pages, re-scoring or not", async () => {
    const snapshot = await cp.engine.registry.get();
    for (const policy of [null, { failCount: 1, hardFailCount: 1 }, { weights: { latency: 3 }, passScore: 80 }]) {
      const req = { from: new Date(from).toISOString(), to: new Date(to).toISOString(), timeline: "paid-c", policy };
      const streamed = await runReplay(cp.engine.deps, snapshot, req);
      const paged = await runReplay(cp.engine.deps, snapshot, req, { pageSize: 97 });
      expect(JSON.stringify(streamed)).toBe(JSON.stringify(paged));
    }
  }, 60_000);

  it("stops a COPY stream when its signal aborts, and cancels it on the server", async (ctx) => {
    const client = postgresClient(cp.database);
    if (client === null) return ctx.skip();
    const ac = new AbortController();
    const read = async () => {
      for await (const _batch of copyResultBatches(client, { from, to, lineIds: null }, { signal: ac.signal })) ac.abort();
    };
    await expect(read()).rejects.toThrow(/abort/i);
    // The pool still answers, and no COPY of the replay is left running.
    const [row] = await client`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and query like 'copy (select id, line_id%' and pid <> pg_backend_pid() and state = 'active'`;
    expect(row?.n).toBe(0);
    const snapshot = await cp.engine.registry.get();
    const aborted = new AbortController();
    aborted.abort();
    await expect(
      runReplay(
        cp.engine.deps,
        snapshot,
        { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
        { signal: aborted.signal },
      ),
    ).rejects.toThrow(/abort/i);
  }, 60_000);
});
