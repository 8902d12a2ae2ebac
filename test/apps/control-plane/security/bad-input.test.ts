// Issue 15 items 0 and 1: input that validated but could not be stored or scheduled. A 400 naming
// the field, nothing stored; a line that cannot be scheduled is left out, the others are not.
import { insertLine, listSchedule } from "@linewatch/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../../apps/control-plane/src/logger";
import { startTestControlPlane, type TestControlPlane } from "../../../helpers/control-plane";
import { lineRow } from "../../../helpers/rows";
import { expectEnvelope, queryRows } from "./helpers";

let cp: TestControlPlane;
const logs: string[] = [];

const line = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  tier: "paid",
  protocol: "openai-chat",
  baseUrl: "http://127.0.0.1:9/v1",
  model: "m",
  routes: [{ route: "chat", weight: 1 }],
  ...extra,
});
const count = async (table: string) =>
  Number((await queryRows<{ n: string }>(cp.database, `select count(*)::text as n from "${table}"`))[0]!.n);
const fields = (body: { error: { details: unknown[] } }) => (body.error.details as { field?: string }[]).map((d) => d.field);

beforeAll(async () => {
  cp = await startTestControlPlane({
    env: { LINEWATCH_SHIPPED_SAMPLES: "false", LOG_LEVEL: "debug" },
    logger: createLogger("debug", (l) => logs.push(l)),
  });
  expect((await cp.request("/v1/routes", { method: "POST", json: { name: "chat" } })).status).toBe(201);
  const sample = { name: "s1", protocol: "openai-chat", request: { messages: [{ role: "user", content: "hi" }] }, expect: {} };
  expect((await cp.request("/v1/samples", { method: "POST", json: sample })).status).toBe(201);
});

afterAll(async () => {
  await cp.stop();
  await cp.testDb.dispose();
});

describe("a probe budget that would stretch the interval past a day (item 0)", () => {
  it("is refused at registration with a 400 naming dailyQuota and probeBudgetPct, and nothing is stored", async () => {
    for (const [dailyQuota, probeBudgetPct] of [
      [1, 1e-7],
      [1, 99],
      [10, 5],
      [1_000_000_000, 1e-10],
    ] as const) {
      const res = await cp.request("/v1/lines", {
        method: "POST",
        json: line(`q-${dailyQuota}-${probeBudgetPct}`, { dailyQuota, probeBudgetPct }),
      });
      const body = await expectEnvelope(res, 400, "invalid_request");
      expect(fields(body)).toEqual(["dailyQuota", "probeBudgetPct"]);
    }
    expect(await count("lines")).toBe(0);
    // One probe a day is the least a budget may allow.
    const ok = await cp.request("/v1/lines", { method: "POST", json: line("q-ok", { dailyQuota: 20, probeBudgetPct: 5 }) });
    expect(ok.status, await ok.clone().text()).toBe(201);
    // Registrations after it still work.
    const next = await cp.request("/v1/lines", { method: "POST", json: line("q-next") });
    expect(next.status, await next.clone().text()).toBe(201);
  });

  it("is refused on PATCH, counting the stored half of the pair, and the line is unchanged", async () => {
    const created = await cp.request("/v1/lines", { method: "POST", json: line("p1", { dailyQuota: 100 }) });
    const { id } = (await created.json()) as { id: string };
    const res = await cp.request(`/v1/lines/${id}`, { method: "PATCH", json: { probeBudgetPct: 1e-7 } });
    expect(fields(await expectEnvelope(res, 400, "invalid_request"))).toEqual(["dailyQuota", "probeBudgetPct"]);
    const after = (await (await cp.request(`/v1/lines/${id}`)).json()) as { probeBudgetPct: number };
    expect(after.probeBudgetPct).toBe(5);
    // Removing the quota lifts the budget altogether.
    const lifted = await cp.request(`/v1/lines/${id}`, { method: "PATCH", json: { dailyQuota: null, probeBudgetPct: 1e-7 } });
    expect(lifted.status, await lifted.clone().text()).toBe(200);
  });

  it("a stored line that cannot be scheduled is skipped and reported; the reconcile schedules the rest", async () => {
    // As one stored before the API refused it.
    const bad = await insertLine(cp.database.db, lineRow("stored-bad", { dailyQuota: 1, probeBudgetPct: 1e-7 }));
    const good = await insertLine(cp.database.db, lineRow("stored-good"));
    await cp.engine.registry.changed();
    await cp.engine.prober.reconcile();
    const scheduled = new Set((await listSchedule(cp.database.db)).map((r) => r.lineId));
    expect(scheduled.has(good.id)).toBe(true);
    expect(scheduled.has(bad.id)).toBe(false);
    expect(cp.engine.prober.unschedulableLines()).toEqual([bad.id]);
    expect(logs.filter((l) => l.includes("line cannot be scheduled") && l.includes("stored-bad"))).toHaveLength(1);
    // Reported once, not on every reconcile; and registrations keep working.
    await cp.engine.prober.reconcile();
    expect(logs.filter((l) => l.includes("line cannot be scheduled"))).toHaveLength(1);
    const res = await cp.request("/v1/lines", { method: "POST", json: line("after-bad") });
    expect(res.status, await res.clone().text()).toBe(201);
  });
});

describe("unpaired UTF-16 surrogates (item 1)", () => {
  // JSON.stringify writes a lone surrogate as the escape \udXXX, which is how a client sends one.
  const cases: [string, string, () => Promise<string>, Record<string, unknown>, string][] = [
    ["POST", "/v1/lines", async () => "/v1/lines", line("s-model", { model: "gpt\udfff" }), "model"],
    ["POST", "/v1/lines", async () => "/v1/lines", line("s-header", { headers: { "x-a": "v\ud83d" } }), "headers.x-a"],
    ["POST", "/v1/lines", async () => "/v1/lines", line("s-key", { apiKey: "sk-\udc00\ud800" }), "apiKey"],
    [
      "POST",
      "/v1/samples",
      async () => "/v1/samples",
      { name: "s2", protocol: "openai-chat", request: { messages: [{ role: "user", content: "a\ud800b" }] }, expect: {} },
      "request.messages.0.content",
    ],
    [
      "POST",
      "/v1/samples",
      async () => "/v1/samples",
      { name: "s3", protocol: "openai-chat", request: { messages: [{ role: "user", content: "hi" }] }, expect: { contains: ["\udbff"] } },
      "expect.contains.0",
    ],
    [
      "PATCH",
      "/v1/lines/:id",
      async () => `/v1/lines/${((await (await cp.request("/v1/lines")).json()) as { lines: { id: string }[] }).lines[0]!.id}`,
      { model: "\ud800" },
      "model",
    ],
    ["POST", "/v1/routes", async () => "/v1/routes", { name: "r-x", policy: { "\ud800": 1 } }, "policy"],
  ];

  it.each(cases)("%s %s: 400 naming the field, nothing stored", async (method, _path, path, body, field) => {
    const before = await queryRows(
      cp.database,
      "select (select count(*) from lines) l, (select count(*) from samples) s, (select max(updated_at) from lines) u, (select count(*) from routes) r",
    );
    const res = await cp.request(await path(), { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const env = await expectEnvelope(res, 400, "invalid_request");
    expect(fields(env)).toContain(field);
    expect(env.error.message).toMatch(/surrogate/);
    expect(
      await queryRows(
        cp.database,
        "select (select count(*) from lines) l, (select count(*) from samples) s, (select max(updated_at) from lines) u, (select count(*) from routes) r",
      ),
    ).toEqual(before);
  });

  it("a well-formed pair (an emoji) is stored and read back as it was", async () => {
    const res = await cp.request("/v1/lines", { method: "POST", json: line("emoji", { model: "m-🙂" }) });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(((await res.json()) as { model: string }).model).toBe("m-🙂");
  });
});
