// docs/roles.md roles, walked over the whole route table: every operation /openapi.json describes plus
// the service endpoints, with no token, a wrong token and each role's token.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../../../apps/control-plane/src/auth";
import { startTestControlPlane, type TestControlPlane } from "../../../helpers/control-plane";
import { createTestDatabase } from "../../../helpers/test-db";
import { createTokens, expectEnvelope, type Operation, openApiOperations, queryRows, type Role, type Tokens } from "./helpers";

let cp: TestControlPlane;
let tokens: Tokens;
let ops: Operation[];
const seeded = { lineId: "", sampleId: "", webhookId: "" };
const KEY = "sk-roles-0123456789abcdef";

/**
 * Who may call what, written out here rather than read from auth.ts: admin everything; viewer every
 * read but tokens and webhook sinks; router only GET /v1/tables* and POST /v1/outcomes (which only a router may call).
 */
function expectedRoles(op: Operation): Role[] {
  const read = op.method === "GET";
  if (op.path === "/v1/outcomes") return ["router"];
  if (op.path.startsWith("/v1/tokens")) return ["admin"];
  if (op.path.startsWith("/v1/webhooks")) return ["admin"];
  if (op.path.startsWith("/v1/tables")) return read ? ["admin", "viewer", "router"] : ["admin"];
  // A replay is a POST that only reads (docs/replay.md).
  if (op.path === "/v1/replay") return ["admin", "viewer"];
  return read ? ["admin", "viewer"] : ["admin"];
}

/** Paths anyone may call (documented in README "Run it for real"). */
const PUBLIC: Operation[] = ["/healthz", "/readyz", "/openapi.json", "/docs", "/metrics", "/favicon.svg", "/favicon.ico"].map((path) => ({
  method: "GET",
  path,
}));

/** A concrete URL for an operation: real ids for reads, so a permitted read answers 200. */
function concrete(op: Operation, forWrite: boolean): string {
  return op.path
    .replace(
      "{id}",
      op.path.startsWith("/v1/samples")
        ? seeded.sampleId
        : forWrite && op.method === "DELETE"
          ? "00000000-0000-4000-8000-000000000000"
          : op.path.startsWith("/v1/webhooks")
            ? seeded.webhookId
            : seeded.lineId,
    )
    .replace("{name}", forWrite && op.method === "DELETE" ? "no-such-route" : "r1")
    .replace("{route}", "r1")
    .replace("{idOrName}", "no-such-token");
}

/** Bodies that change nothing when a permitted write runs: invalid ones, or empty patches. */
const harmlessBody = (op: Operation) =>
  op.method === "POST" && !op.path.endsWith("/probe") ? { json: {} } : op.method === "PATCH" ? { json: {} } : {};

const call = (op: Operation, token: string | undefined, forWrite = true) =>
  cp.request(concrete(op, forWrite), { method: op.method, ...harmlessBody(op), ...(token ? { token } : {}) });

beforeAll(async () => {
  cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" } });
  // Open mode (no token yet): everything but credentials is allowed without a token.
  expect((await cp.request("/v1/lines")).status).toBe(200);
  tokens = await createTokens(cp);
  const admin = tokens.admin;
  expect((await cp.request("/v1/routes", { method: "POST", json: { name: "r1" }, token: admin })).status).toBe(201);
  const line = await cp.request("/v1/lines", {
    method: "POST",
    token: admin,
    json: {
      name: "l1",
      tier: "paid",
      protocol: "openai-chat",
      baseUrl: "http://127.0.0.1:9/v1",
      model: "m",
      apiKey: KEY,
      headers: { "x-org": "org-1" },
      routes: [{ route: "r1", weight: 1 }],
    },
  });
  expect(line.status).toBe(201);
  seeded.lineId = ((await line.json()) as { id: string }).id;
  const sample = await cp.request("/v1/samples", {
    method: "POST",
    token: admin,
    json: {
      name: "s1",
      protocol: "openai-chat",
      request: { messages: [{ role: "user", content: "hi" }] },
      expect: { minLength: 1 },
      timeoutMs: 500,
    },
  });
  expect(sample.status).toBe(201);
  seeded.sampleId = ((await sample.json()) as { id: string }).id;
  // A sink whose receiver is not there: its test delivery fails fast, nothing else is sent.
  const webhook = await cp.request("/v1/webhooks", {
    method: "POST",
    token: admin,
    json: { name: "w1", url: "http://127.0.0.1:9/hook", secret: "whsec-roles-0123456789" },
  });
  expect(webhook.status).toBe(201);
  seeded.webhookId = ((await webhook.json()) as { id: string }).id;
  ops = await openApiOperations(cp);
});
afterAll(async () => {
  await cp.stop();
  await cp.testDb.dispose();
});

describe("the route table", () => {
  it("is what the walk below covers (a new route joins it by being in /openapi.json)", () => {
    const names = ops.map((o) => `${o.method} ${o.path}`);
    expect(names).toEqual(
      expect.arrayContaining([
        "POST /v1/lines",
        "GET /v1/lines/{id}/health",
        "POST /v1/lines/{id}/probe",
        "GET /v1/tables/{route}",
        "GET /v1/events",
        "POST /v1/tokens",
        "DELETE /v1/tokens/{idOrName}",
        "PATCH /v1/routes/{name}",
        "DELETE /v1/samples/{id}",
        "GET /v1/webhooks/{id}",
        "POST /v1/webhooks/{id}/test",
      ]),
    );
    expect(ops.length).toBeGreaterThanOrEqual(20);
    expect(ops.every((o) => o.path.startsWith("/v1/"))).toBe(true);
  });

  it("describes no service endpoint outside the walk: each is public here, or the dashboard (its own sign-in)", async () => {
    const service = (await openApiOperations(cp, { v1Only: false })).filter((o) => !o.path.startsWith("/v1/"));
    expect(service.map((o) => `${o.method} ${o.path}`).sort()).toEqual(
      ["GET /", ...PUBLIC.filter((o) => !o.path.startsWith("/favicon")).map((o) => `${o.method} ${o.path}`)].sort(),
    );
  });
});

describe("once a token exists", () => {
  it("answers 401 without a token and with a wrong or malformed one, on every /v1 operation", async () => {
    for (const op of ops) {
      for (const token of [undefined, "lw_admin_not-a-real-token", `${tokens.admin}x`]) {
        const res = await call(op, token);
        const where = `${op.method} ${op.path} with ${token ? "a wrong token" : "no token"}`;
        expect(res.status, where).toBe(401);
        expect(res.headers.get("www-authenticate"), where).toMatch(/^Bearer/);
        await expectEnvelope(res, 401, "unauthorized");
      }
      // Not a bearer scheme, or the token in the query string: neither counts.
      const basic = await cp.request(concrete(op, true), {
        method: op.method,
        ...harmlessBody(op),
        headers: { authorization: `Basic ${Buffer.from(`x:${tokens.admin}`).toString("base64")}` },
      });
      expect(basic.status, `${op.method} ${op.path} Basic`).toBe(401);
      const query = await cp.request(`${concrete(op, true)}?token=${tokens.admin}`, { method: op.method, ...harmlessBody(op) });
      expect(query.status, `${op.method} ${op.path} ?token=`).toBe(401);
    }
  });

  it("answers 403 for the wrong role and lets the right role through, on every /v1 operation", async () => {
    const seen: string[] = [];
    for (const op of ops) {
      const allowed = expectedRoles(op);
      for (const role of ["admin", "viewer", "router"] as const) {
        const res = await call(op, tokens[role]);
        const where = `${role} ${op.method} ${op.path} → ${res.status}`;
        seen.push(where);
        if (allowed.includes(role)) {
          expect(res.status, where).not.toBe(401);
          expect(res.status, where).not.toBe(403);
          expect(res.status, where).toBeLessThan(500);
          if (op.method === "GET") expect(res.status, where).toBe(200);
          await res.arrayBuffer();
        } else {
          const body = await expectEnvelope(res, 403, "forbidden");
          expect(body.error.message, where).toContain(role);
        }
      }
    }
    // Every operation was tried by all three roles.
    expect(seen).toHaveLength(ops.length * 3);
    // The permitted writes changed nothing that the seeded reads rely on.
    expect((await cp.request(`/v1/lines/${seeded.lineId}`, { token: tokens.viewer })).status).toBe(200);
  });

  it("keeps liveness, readiness, the API description, its docs and /metrics public, whatever the header", async () => {
    for (const op of PUBLIC) {
      for (const token of [undefined, "garbage", tokens.router, tokens.viewer]) {
        const res = await cp.request(op.path, token ? { token } : {});
        expect(res.status, `${op.path} with ${token ?? "no token"}`).toBe(200);
        await res.arrayBuffer();
      }
    }
  });

  it("gives the dashboard to no one without a token, and never to a router token", async () => {
    for (const token of [undefined, "garbage", tokens.router]) {
      const res = await cp.request("/", { redirect: "manual", ...(token ? { token } : {}) });
      const html = await res.text();
      // Whatever it answers (401/403, a redirect, a login page), it shows no line.
      if (res.status === 200) expect(html).not.toContain("l1");
    }
    const viewer = await cp.request("/", { token: tokens.viewer });
    expect(viewer.status).toBe(200);
    await viewer.arrayBuffer();
  });

  it("accepts the scheme name in any case, and rejects other schemes", async () => {
    expect((await cp.request("/v1/lines", { headers: { authorization: `bearer ${tokens.viewer}` } })).status).toBe(200);
    expect((await cp.request("/v1/lines", { headers: { authorization: `BEARER  ${tokens.viewer}` } })).status).toBe(200);
    expect((await cp.request("/v1/lines", { headers: { authorization: `Token ${tokens.viewer}` } })).status).toBe(401);
    expect((await cp.request("/v1/lines", { headers: { authorization: tokens.viewer } })).status).toBe(401);
  });
});

describe("tables", () => {
  const lineOf = async (res: Response) => {
    expect(res.status).toBe(200);
    const text = await res.text();
    const body = JSON.parse(text) as { lines?: Record<string, unknown>[]; tables?: { lines: Record<string, unknown>[] }[] };
    return { text, line: (body.lines ?? body.tables?.[0]?.lines ?? [])[0] ?? {} };
  };

  it("carry the credentials (apiKey, headers) only for a router token", async () => {
    for (const path of ["/v1/tables/r1", "/v1/tables"]) {
      const router = await lineOf(await cp.request(path, { token: tokens.router }));
      expect(router.line).toMatchObject({ name: "l1", apiKey: KEY, headers: { "x-org": "org-1" } });
      for (const role of ["admin", "viewer"] as const) {
        const { text, line } = await lineOf(await cp.request(path, { token: tokens[role] }));
        expect(line.name).toBe("l1");
        expect(line).not.toHaveProperty("apiKey");
        expect(line).not.toHaveProperty("headers");
        expect(text).not.toContain(KEY);
        expect(text).not.toContain("org-1");
      }
    }
  });
});

describe("tokens", () => {
  it("are stored as hashes and listed without their values", async () => {
    const list = await queryRows<{ name: string; hash: string }>(cp.database, "select name, role, hash from tokens");
    const text = JSON.stringify(list);
    for (const token of Object.values(tokens)) {
      expect(text).not.toContain(token);
      expect(list.map((r) => r.hash)).toContain(hashToken(token).toString("hex"));
    }
    const listed = await (await cp.request("/v1/tokens", { token: tokens.admin })).text();
    for (const token of Object.values(tokens)) expect(listed).not.toContain(token);
  });

  it("stop working when revoked, and the last admin token cannot be revoked", async () => {
    const extra = await cp.request("/v1/tokens", { method: "POST", json: { name: "short-lived", role: "viewer" }, token: tokens.admin });
    const value = ((await extra.json()) as { token: string }).token;
    expect((await cp.request("/v1/lines", { token: value })).status).toBe(200);
    expect((await cp.request("/v1/tokens/short-lived", { method: "DELETE", token: tokens.admin })).status).toBe(200);
    expect((await cp.request("/v1/lines", { token: value })).status).toBe(401);

    // The only admin token cannot be revoked (nobody could administer any more).
    await expectEnvelope(await cp.request("/v1/tokens/t-admin", { method: "DELETE", token: tokens.admin }), 409, "conflict");
    // With a second admin it can.
    const second = (
      (await (
        await cp.request("/v1/tokens", { method: "POST", json: { name: "admin-2", role: "admin" }, token: tokens.admin })
      ).json()) as { token: string }
    ).token;
    expect((await cp.request("/v1/tokens/t-admin", { method: "DELETE", token: second })).status).toBe(200);
    expect((await cp.request("/v1/lines", { token: tokens.admin })).status).toBe(401);
    tokens.admin = second;
  });

  it("reserves the bootstrap-admin names for LINEWATCH_ADMIN_TOKEN", async () => {
    const res = await cp.request("/v1/tokens", { method: "POST", json: { name: "bootstrap-admin-x", role: "admin" }, token: tokens.admin });
    await expectEnvelope(res, 400, "invalid_request");
  });

  it("never fall back to open mode, even with every token revoked behind the API's back", async () => {
    await queryRows(cp.database, "update tokens set revoked_at = now() where revoked_at is null");
    cp.services.tokens.invalidate();
    expect(await cp.services.tokens.isOpen()).toBe(false);
    await expectEnvelope(await cp.request("/v1/lines"), 401, "unauthorized");
    await expectEnvelope(await cp.request("/v1/tokens", { method: "POST", json: { name: "sneaky", role: "admin" } }), 401, "unauthorized");
  });
});

describe("LINEWATCH_ADMIN_TOKEN", () => {
  it("is stored hashed at start; a new value replaces the old one across a restart", async () => {
    const testDb = await createTestDatabase({ persistent: true });
    const first = "bootstrap-token-aaaaaaaaaaaaaaaa";
    const second = "bootstrap-token-bbbbbbbbbbbbbbbb";
    let boot = await startTestControlPlane({ testDb, env: { LINEWATCH_ADMIN_TOKEN: first, LINEWATCH_SHIPPED_SAMPLES: "false" } });
    try {
      expect((await boot.request("/v1/lines")).status).toBe(401);
      expect((await boot.request("/v1/lines", { token: first })).status).toBe(200);
      await boot.stop();
      boot = await startTestControlPlane({ testDb, env: { LINEWATCH_ADMIN_TOKEN: second, LINEWATCH_SHIPPED_SAMPLES: "false" } });
      expect((await boot.request("/v1/lines", { token: second })).status).toBe(200);
      expect((await boot.request("/v1/lines", { token: first })).status).toBe(401);
      await boot.stop();
      // The old value again (a rollback of the deployment) does not bring the revoked token back
      // into a deployment that has moved on: it is stored revoked, so it stays revoked.
      boot = await startTestControlPlane({ testDb, env: { LINEWATCH_ADMIN_TOKEN: first, LINEWATCH_SHIPPED_SAMPLES: "false" } });
      expect((await boot.request("/v1/lines", { token: first })).status).toBe(401);
    } finally {
      await boot.stop();
      await testDb.dispose();
    }
  });
});

describe("open mode, then LINEWATCH_METRICS_PUBLIC=false", () => {
  it("gives no credentials without a token, and puts /metrics behind an admin or viewer token once one exists", async () => {
    const other = await startTestControlPlane({ env: { LINEWATCH_METRICS_PUBLIC: "false", LINEWATCH_SHIPPED_SAMPLES: "false" } });
    try {
      // Open mode (no token was ever created): tables, but no credentials in them.
      await other.request("/v1/routes", { method: "POST", json: { name: "r" } });
      await other.request("/v1/lines", {
        method: "POST",
        json: {
          name: "l",
          tier: "paid",
          protocol: "openai-chat",
          baseUrl: "http://127.0.0.1:9/v1",
          model: "m",
          apiKey: KEY,
          routes: [{ route: "r", weight: 1 }],
        },
      });
      const text = await (await other.request("/v1/tables/r")).text();
      expect(text).toContain('"name":"l"');
      expect(text).not.toContain(KEY);
      expect((await other.request("/metrics")).status).toBe(200);

      const t = await createTokens(other, "m");
      await expectEnvelope(await other.request("/metrics"), 401, "unauthorized");
      await expectEnvelope(await other.request("/metrics", { token: t.router }), 403, "forbidden");
      for (const role of ["admin", "viewer"] as const) {
        const res = await other.request("/metrics", { token: t[role] });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
      expect((await other.request("/healthz")).status).toBe(200);
    } finally {
      await other.stop();
      await other.testDb.dispose();
    }
  });
});
