import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { createTestDatabase } from "../../helpers/test-db";

let cp: TestControlPlane;

const route = (name: string, extra: object = {}) => ({ name, ...extra });
const line = (name: string, extra: object = {}) => ({
  name,
  tier: "paid",
  protocol: "openai-chat",
  baseUrl: "http://127.0.0.1:9/v1",
  model: "gpt-test",
  routes: [{ route: "chat", weight: 100 }],
  ...extra,
});

async function expectError(res: Response, status: number, code: string, field?: string) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { code: string; message: string; details: { field?: string }[] } };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(Array.isArray(body.error.details)).toBe(true);
  if (field) {
    expect(body.error.details.map((d) => d.field)).toContain(field);
    expect(body.error.message).toContain(field);
  }
  return body;
}

async function counts() {
  const [lines, routes, samples] = await Promise.all(
    ["/v1/lines", "/v1/routes", "/v1/samples"].map(async (p) => (await (await cp.request(p)).json()) as Record<string, unknown[]>),
  );
  return { lines: lines!.lines!.length, routes: routes!.routes!.length, samples: samples!.samples!.length };
}

beforeAll(async () => {
  cp = await startTestControlPlane({ testDb: await createTestDatabase({ persistent: true }) });
  expect((await cp.request("/v1/routes", { method: "POST", json: route("chat") })).status).toBe(201);
});
afterAll(async () => {
  await cp.stop();
  await cp.testDb.dispose();
});

describe("registry API over HTTP", () => {
  it("registers, lists, gets, patches and deletes a line; the key never comes back", async () => {
    const res = await cp.request("/v1/lines", { method: "POST", json: line("crud-a", { apiKey: "sk-secret-123", maxShare: 0.5 }) });
    expect(res.status).toBe(201);
    const created = (await res.json()) as Record<string, unknown>;
    expect(created).toMatchObject({
      name: "crud-a",
      tier: "paid",
      hasApiKey: true,
      probeIntervalSec: 45,
      probeBudgetPct: 5,
      adminState: "active",
      maxShare: 0.5,
    });
    expect(JSON.stringify(created)).not.toContain("sk-secret-123");
    expect(res.headers.get("location")).toBe(`/v1/lines/${created.id}`);

    const got = (await (await cp.request(`/v1/lines/${created.id}`)).json()) as Record<string, unknown>;
    expect(got).toEqual(created);
    const list = (await (await cp.request("/v1/lines")).json()) as { lines: { name: string }[] };
    expect(list.lines.map((l) => l.name)).toContain("crud-a");

    const patched = await cp.request(`/v1/lines/${created.id}`, {
      method: "PATCH",
      json: { adminState: "drained", apiKey: null, maxShare: null },
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ adminState: "drained", hasApiKey: false, maxShare: null, name: "crud-a" });

    expect((await cp.request(`/v1/lines/${created.id}`, { method: "DELETE" })).status).toBe(204);
    await expectError(await cp.request(`/v1/lines/${created.id}`), 404, "not_found");
  });

  it("manages samples and routes, with route warnings for all-free routes", async () => {
    const s = await cp.request("/v1/samples", {
      method: "POST",
      json: {
        name: "echo-1",
        protocol: "openai-chat",
        request: { messages: [{ role: "user", content: "say {{nonce}}" }] },
        expect: { nonce: true, minLength: 5 },
      },
    });
    expect(s.status).toBe(201);
    const sample = (await s.json()) as { id: string; source: string; weight: number };
    expect(sample).toMatchObject({ source: "api", weight: 1 });
    const p = await cp.request(`/v1/samples/${sample.id}`, { method: "PATCH", json: { expect: { nonce: true, varies: true } } });
    expect(await p.json()).toMatchObject({ expect: { nonce: true, varies: true } });
    expect((await cp.request(`/v1/samples/${sample.id}`, { method: "DELETE" })).status).toBe(204);

    expect(
      (await cp.request("/v1/routes", { method: "POST", json: route("free-only", { freeShareCap: 0.3, onAllDown: "fail-closed" }) }))
        .status,
    ).toBe(201);
    await cp.request("/v1/lines", { method: "POST", json: line("free-1", { tier: "free", routes: [{ route: "free-only", weight: 10 }] }) });
    const r = (await (await cp.request("/v1/routes/free-only")).json()) as {
      warnings: string[];
      lines: { name: string }[];
      freeShareCap: number;
    };
    expect(r.freeShareCap).toBe(0.3);
    expect(r.lines.map((l) => l.name)).toEqual(["free-1"]);
    expect(r.warnings.join(" ")).toMatch(/free/);
    const patched = await cp.request("/v1/routes/free-only", { method: "PATCH", json: { onAllDown: "fail-open" } });
    expect(await patched.json()).toMatchObject({ onAllDown: "fail-open" });
  });

  it("ships the golden samples from probes/ on first run", async () => {
    const list = (await (await cp.request("/v1/samples")).json()) as { samples: { name: string; source: string }[] };
    const shipped = list.samples.filter((s) => s.source === "shipped").map((s) => s.name);
    expect(shipped).toEqual(expect.arrayContaining(["json-fields", "nonce-echo", "travel-minutes", "long-explainer"]));
  });

  it("refuses to delete a route that lines refer to, unless cascading; never leaves dangling rows", async () => {
    await cp.request("/v1/routes", { method: "POST", json: route("doomed") });
    const l = (await (
      await cp.request("/v1/lines", {
        method: "POST",
        json: line("doomed-line", {
          routes: [
            { route: "doomed", weight: 5 },
            { route: "chat", weight: 1 },
          ],
        }),
      })
    ).json()) as { id: string };
    const body = await expectError(await cp.request("/v1/routes/doomed", { method: "DELETE" }), 409, "conflict");
    expect(JSON.stringify(body.error.details)).toContain("doomed-line");
    expect((await cp.request("/v1/routes/doomed?cascade=true", { method: "DELETE" })).status).toBe(204);
    const after = (await (await cp.request(`/v1/lines/${l.id}`)).json()) as { routes: { route: string }[] };
    expect(after.routes).toEqual([{ route: "chat", weight: 1 }]);
    await expectError(await cp.request("/v1/routes/doomed"), 404, "not_found");
  });
});

describe("bad input", () => {
  it("answers malformed JSON with 400", async () => {
    await expectError(
      await cp.request("/v1/lines", { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" }),
      400,
      "invalid_request",
    );
  });

  it.each([
    ["missing name", { name: undefined }, "name"],
    ["wrongly typed probeIntervalSec", { probeIntervalSec: "45" }, "probeIntervalSec"],
    ["unknown tier", { tier: "gold" }, "tier"],
    ["unknown protocol", { protocol: "soap" }, "protocol"],
    ["negative weight", { routes: [{ route: "chat", weight: -1 }] }, "routes.0.weight"],
    ["maxShare above 1", { maxShare: 1.5 }, "maxShare"],
    ["non-http baseUrl", { baseUrl: "ftp://example.com/v1" }, "baseUrl"],
    ["metadata baseUrl", { baseUrl: "http://169.254.169.254/latest" }, "baseUrl"],
    ["unknown field", { baseURL: "http://x" }, "baseURL"],
    ["interval out of range", { probeIntervalSec: 0 }, "probeIntervalSec"],
  ])("line with %s → 400 naming %s", async (_what, patch, field) => {
    const before = await counts();
    await expectError(await cp.request("/v1/lines", { method: "POST", json: line("bad-line", patch) }), 400, "invalid_request", field);
    expect(await counts()).toEqual(before);
  });

  it.each([
    ["unknown onAllDown", { onAllDown: "fail-sideways" }, "onAllDown"],
    ["freeShareCap outside 0–1", { freeShareCap: -0.1 }, "freeShareCap"],
    ["bad name", { name: "has spaces" }, "name"],
  ])("route with %s → 400 naming %s", async (_what, patch, field) => {
    const before = await counts();
    await expectError(await cp.request("/v1/routes", { method: "POST", json: route("bad-route", patch) }), 400, "invalid_request", field);
    expect(await counts()).toEqual(before);
  });

  it.each([
    ["an invalid regex", { expect: { matches: "(" } }, "expect.matches"],
    ["model in the request", { request: { model: "x", messages: [{ role: "user", content: "hi" }] } }, "request.model"],
    ["no messages", { request: { prompt: "hi" } }, "request.messages"],
    ["an unknown expectation", { expect: { minLenght: 3 } }, "expect.minLenght"],
  ])("sample with %s → 400 naming %s", async (_what, patch, field) => {
    const before = await counts();
    const sample = {
      name: "bad-sample",
      protocol: "openai-chat",
      request: { messages: [{ role: "user", content: "hi" }] },
      expect: {},
      ...patch,
    };
    await expectError(await cp.request("/v1/samples", { method: "POST", json: sample }), 400, "invalid_request", field);
    expect(await counts()).toEqual(before);
  });

  it("answers a duplicate name with 409 and changes nothing", async () => {
    expect((await cp.request("/v1/lines", { method: "POST", json: line("dup") })).status).toBe(201);
    const before = await counts();
    await expectError(await cp.request("/v1/lines", { method: "POST", json: line("dup", { tier: "free" }) }), 409, "conflict", "name");
    await expectError(await cp.request("/v1/routes", { method: "POST", json: route("chat") }), 409, "conflict", "name");
    expect(await counts()).toEqual(before);
  });

  it("answers unknown ids and routes with 404", async () => {
    await expectError(await cp.request("/v1/lines/00000000-0000-4000-8000-000000000000"), 404, "not_found");
    await expectError(await cp.request("/v1/lines/not-a-uuid"), 404, "not_found");
    await expectError(
      await cp.request("/v1/samples/00000000-0000-4000-8000-000000000000", { method: "PATCH", json: { weight: 2 } }),
      404,
      "not_found",
    );
    await expectError(await cp.request("/v1/routes/nope"), 404, "not_found");
    const before = await counts();
    await expectError(
      await cp.request("/v1/lines", { method: "POST", json: line("orphan", { routes: [{ route: "nope", weight: 1 }] }) }),
      404,
      "not_found",
    );
    expect(await counts()).toEqual(before);
  });

  it("answers a body over 1 MiB with 413", async () => {
    const big = line("huge", { headers: { "x-pad": "a".repeat(1024 * 1024 + 10) } });
    await expectError(await cp.request("/v1/lines", { method: "POST", json: big }), 413, "payload_too_large");
  });

  it("answers an unknown path with the envelope", async () => {
    await expectError(await cp.request("/v1/nothing-here"), 404, "not_found");
  });
});

describe("service endpoints", () => {
  it("serves /healthz and /readyz", async () => {
    expect(await (await cp.request("/healthz")).json()).toEqual({ status: "ok" });
    const ready = await cp.request("/readyz");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ database: "ok" });
  });

  it("describes every registry route in /openapi.json and renders /docs", async () => {
    const doc = (await (await cp.request("/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> };
    const ops = Object.entries(doc.paths).flatMap(([p, m]) => Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`));
    for (const resource of ["lines", "samples"]) {
      expect(ops).toEqual(
        expect.arrayContaining([
          `POST /v1/${resource}`,
          `GET /v1/${resource}`,
          `GET /v1/${resource}/{id}`,
          `PATCH /v1/${resource}/{id}`,
          `DELETE /v1/${resource}/{id}`,
        ]),
      );
    }
    expect(ops).toEqual(
      expect.arrayContaining([
        "POST /v1/routes",
        "GET /v1/routes",
        "GET /v1/routes/{name}",
        "PATCH /v1/routes/{name}",
        "DELETE /v1/routes/{name}",
      ]),
    );
    const docs = await cp.request("/docs");
    expect(docs.headers.get("content-type")).toContain("text/html");
    const page = await docs.text();
    expect(page).toContain("/v1/lines/{id}");
    expect(page).toContain('<link rel="icon" href="/favicon.svg"');
  });

  it("describes the service endpoints of docs/api.md in /openapi.json, public ones without a token", async () => {
    const doc = (await (await cp.request("/openapi.json")).json()) as {
      paths: Record<string, { get?: { security?: unknown[]; responses: Record<string, unknown> } }>;
    };
    for (const path of ["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs", "/"]) {
      const get = doc.paths[path]?.get;
      expect(get, path).toBeDefined();
      expect(Object.keys(get?.responses ?? {}), path).toContain("200");
      // LINEWATCH_METRICS_PUBLIC is true here: all six answer without a token (auth.ts isPublicPath).
      expect(get?.security, path).toEqual([]);
    }
    expect(Object.keys(doc.paths["/readyz"]?.get?.responses ?? {})).toContain("503");
  });

  it("serves a favicon to anyone, so the docs page and the dashboard ask for nothing that 404s", async () => {
    for (const path of ["/favicon.svg", "/favicon.ico"]) {
      const res = await cp.request(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/svg+xml");
      expect(await res.text()).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[^>]*>.*<\/svg>$/);
    }
  });
});

describe("restart", () => {
  it("keeps what the API wrote across a restart of the process", async () => {
    const res = await cp.request("/v1/lines", { method: "POST", json: line("survivor", { apiKey: "sk-keep", dailyQuota: 1000 }) });
    const created = (await res.json()) as { id: string };
    cp = await cp.restart();
    const got = await cp.request(`/v1/lines/${created.id}`);
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({
      name: "survivor",
      hasApiKey: true,
      dailyQuota: 1000,
      routes: [{ route: "chat", weight: 100 }],
    });
  });
});
