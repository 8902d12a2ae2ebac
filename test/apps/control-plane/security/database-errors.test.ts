// Issue 15 items 3 (the error handler logs no query parameters) and 6b (a database that cannot be
// reached answers 503 `unavailable` with one rate-limited log line; a manual probe that could not
// be stored says so with a 503). The database is really closed under the running control plane.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../../apps/control-plane/src/logger";
import { startTestControlPlane, type TestControlPlane } from "../../../helpers/control-plane";
import { expectEnvelope, queryRows } from "./helpers";
import { startTinyServer, type TinyServer } from "./upstreams";

const logs: { msg: string; [k: string]: unknown }[] = [];
const logger = createLogger("debug", (l) => logs.push(JSON.parse(l)));

describe("a failed query in a request", () => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" }, logger });
  });
  afterAll(async () => {
    await cp.stop();
    await cp.testDb.dispose();
  });

  it("is logged as its class, code and statement, never with its parameters or the query string", async () => {
    // Events filtered by line name look the name up first: with the table gone that query fails,
    // and drizzle's error text carries the name as a parameter.
    await queryRows(cp.database, 'alter table "lines" rename to "lines_gone"');
    try {
      const before = logs.length;
      const res = await cp.request("/v1/events?line=param-secret-9d8c7b&token=query-secret-1a2b3c");
      await expectEnvelope(res, 500, "internal");
      const logged = logs.slice(before);
      const line = logged.find((l) => l.msg === "unhandled error");
      expect(line).toMatchObject({ path: "/v1/events", method: "GET", code: "42P01", statement: 'select "lines"' });
      expect(JSON.stringify(logged)).not.toMatch(/param-secret|query-secret|Failed query|params:/);
    } finally {
      await queryRows(cp.database, 'alter table "lines_gone" rename to "lines"');
    }
  });
});

describe("a database that cannot be reached", () => {
  let cp: TestControlPlane;
  let upstream: TinyServer;
  let lineId = "";
  beforeAll(async () => {
    upstream = await startTinyServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content: "Hello there." }, finish_reason: "stop" }] }));
    });
    cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" }, logger });
    expect((await cp.request("/v1/routes", { method: "POST", json: { name: "chat" } })).status).toBe(201);
    const sample = { name: "s1", protocol: "openai-chat", request: { messages: [{ role: "user", content: "hi" }] }, expect: {} };
    expect((await cp.request("/v1/samples", { method: "POST", json: sample })).status).toBe(201);
    const line = await cp.request("/v1/lines", {
      method: "POST",
      json: {
        name: "l1",
        tier: "paid",
        protocol: "openai-chat",
        baseUrl: `${upstream.url}/v1`,
        model: "m",
        routes: [{ route: "chat", weight: 1 }],
      },
    });
    lineId = ((await line.json()) as { id: string }).id;
    await cp.database.close(); // the outage: every query from now on fails to reach the database
  });
  afterAll(async () => {
    await cp.stop();
    await cp.testDb.dispose();
    await upstream.close();
  });

  it("answers reads and writes 503 unavailable, with one log line for many failed requests", async () => {
    const before = logs.length;
    for (let i = 0; i < 5; i++) {
      await expectEnvelope(await cp.request("/v1/lines"), 503, "unavailable");
      await expectEnvelope(await cp.request(`/v1/lines/${lineId}/health`), 503, "unavailable");
      await expectEnvelope(await cp.request("/v1/routes", { method: "POST", json: { name: `r${i}` } }), 503, "unavailable");
    }
    const logged = logs.slice(before);
    expect(logged.filter((l) => l.msg === "database unavailable")).toHaveLength(1);
    expect(logged.filter((l) => l.msg === "unhandled error")).toEqual([]);
  });

  it("answers a manual probe 503 saying the result was not stored, although the upstream was asked", async () => {
    const asked = upstream.requests.length;
    const res = await cp.request(`/v1/lines/${lineId}/probe`, { method: "POST" });
    const body = await expectEnvelope(res, 503, "unavailable");
    expect(body.error.message).toMatch(/could not be stored/);
    expect(upstream.requests.length).toBe(asked + 1);
  });
});
