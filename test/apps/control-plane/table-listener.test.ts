// GET/HEAD /v1/tables/:route is served before Hono (routes/tables/listener.ts, issue 16 item 3). What a
// client sees must not change: each request here goes to the control plane's own server and to a
// server of the same Hono app without that listener (what it served with before), and the two
// answers must be the same, refusals and errors included (those the listener leaves to Hono).
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLine, createRoute } from "../../helpers/api";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import { createTokens, type Tokens } from "./security/helpers";

let cp: TestControlPlane;
let tokens: Tokens;
let plain: Server;
let plainUrl: string;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(base: string, path: string, init: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method: init.method ?? "GET", headers: init.headers ?? {} }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => {
        const { date: _date, ...headers } = res.headers;
        resolve({ status: res.statusCode ?? 0, headers, body });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/** The same request to both servers: the same status, headers (but the date) and body. */
async function same(path: string, init: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const fast = await send(cp.url, path, init);
  const before = await send(plainUrl, path, init);
  expect(fast, `${init.method ?? "GET"} ${path}`).toEqual(before);
  return fast;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" } });
  await createRoute(cp, "chat");
  await createRoute(cp, "quiet"); // a route with no table yet: its first request computes it (Hono's)
  await createLine(cp, { name: "a", baseUrl: "http://127.0.0.1:9/v1", apiKey: "sk-listener-a", routes: [{ route: "chat", weight: 1 }] });
  await createLine(cp, {
    name: "b",
    baseUrl: "http://127.0.0.1:9/v1",
    headers: { "x-extra": "secret" },
    routes: [{ route: "chat", weight: 3 }],
  });
  tokens = await createTokens(cp, "listener");
  plain = createServer(getRequestListener(cp.app.fetch, { hostname: "127.0.0.1" }));
  await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
  plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => plain?.close(() => resolve()));
  await cp?.stop();
});

describe("the table listener before Hono", () => {
  it("answers 200s, 304s and HEADs as the Hono route does, for each role", async () => {
    const router = await same("/v1/tables/chat", { headers: bearer(tokens.router) });
    expect(router.status).toBe(200);
    expect(router.body).toContain("sk-listener-a"); // credentials for a router token only
    const viewer = await same("/v1/tables/chat", { headers: bearer(tokens.viewer) });
    expect(viewer.body).not.toContain("sk-listener-a");
    await same("/v1/tables/chat", { headers: bearer(tokens.admin) });
    const etag = String(router.headers.etag);
    const version = etag.replaceAll('"', "");
    for (const match of [etag, `W/${etag}`, `"0", ${etag}`, version]) {
      expect((await same("/v1/tables/chat", { headers: { ...bearer(tokens.router), "if-none-match": match } })).status).toBe(304);
    }
    expect((await same("/v1/tables/chat", { headers: { ...bearer(tokens.viewer), "if-none-match": '"0"' } })).status).toBe(200);
    expect((await same("/v1/tables/chat?waitSec=0", { headers: { ...bearer(tokens.router), "if-none-match": etag } })).status).toBe(304);
    expect((await same("/v1/tables/chat?other=1&waitSec=0", { headers: bearer(tokens.viewer) })).status).toBe(200);
    const head = await same("/v1/tables/chat", { method: "HEAD", headers: bearer(tokens.router) });
    expect(head.status).toBe(200);
    expect(head.body).toBe("");
    expect((await same("/v1/tables/chat", { method: "HEAD", headers: { ...bearer(tokens.viewer), "if-none-match": etag } })).status).toBe(
      304,
    );
  });

  it("leaves refusals, errors and what needs decoding to Hono, which answers them as before", async () => {
    expect((await same("/v1/tables/chat")).status).toBe(401);
    expect((await same("/v1/tables/chat", { headers: bearer("lw_router_not-a-token") })).status).toBe(401);
    expect((await same("/v1/tables/chat", { headers: { authorization: "Basic abc" } })).status).toBe(401);
    expect((await same("/v1/tables/nope", { headers: bearer(tokens.router) })).status).toBe(404);
    expect((await same("/v1/tables/chat?waitSec=99", { headers: bearer(tokens.router) })).status).toBe(400);
    expect((await same("/v1/tables/chat?waitSec=x", { headers: bearer(tokens.router) })).status).toBe(400);
    expect((await same("/v1/tables/c%68at", { headers: bearer(tokens.viewer) })).status).toBe(200);
    expect((await same("/v1/tables/chat/", { headers: bearer(tokens.viewer) })).status).toBe(404);
    expect((await same("/v1/tables/", { headers: bearer(tokens.viewer) })).status).toBe(404);
    expect((await same("/v1/tables/chat", { method: "POST", headers: bearer(tokens.router) })).status).toBe(403);
    // A route's first request computes its table (then both servers hold it).
    const first = await send(cp.url, "/v1/tables/quiet", { headers: bearer(tokens.viewer) });
    expect(first.status).toBe(200);
    await same("/v1/tables/quiet", { headers: bearer(tokens.viewer) });
  });

  it("holds a long-poll until a new version, and lets go of one whose client left", async () => {
    const etag = String((await send(cp.url, "/v1/tables/chat", { headers: bearer(tokens.router) })).headers.etag);
    const polled = send(cp.url, "/v1/tables/chat?waitSec=30", { headers: { ...bearer(tokens.router), "if-none-match": etag } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = (await (await cp.request("/v1/lines", { token: tokens.admin })).json()) as { lines: { id: string; name: string }[] };
    const a = lines.lines.find((l) => l.name === "a")?.id ?? "";
    const patch = await cp.request(`/v1/lines/${a}`, {
      method: "PATCH",
      token: tokens.admin,
      json: { routes: [{ route: "chat", weight: 2 }] },
    });
    expect(patch.status).toBe(200);
    const answer = await polled;
    expect(answer.status).toBe(200);
    expect(answer.headers.etag).not.toBe(etag);
    expect(answer.body).toContain("sk-listener-a");

    // A client that goes away: its wait ends (no waiter left behind).
    const waiters = () => cp.engine.publisher.waiting("chat");
    const req = httpRequest(`${cp.url}/v1/tables/chat?waitSec=30`, {
      headers: { ...bearer(tokens.router), "if-none-match": String(answer.headers.etag) },
    });
    req.on("error", () => {});
    req.end();
    await expect.poll(waiters).toBe(1);
    req.destroy();
    await expect.poll(waiters).toBe(0);
  });

  it("wakes hundreds of long-polls of both roles in chunks: each answered once, credentials to router tokens only", async () => {
    const current = await send(cp.url, "/v1/tables/chat", { headers: bearer(tokens.viewer) });
    const etag = String(current.headers.etag);
    // More than a chunk (WAKE_CHUNK) of each role, each on its own connection.
    const polls = Array.from({ length: 600 }, (_, i) => {
      const token = i % 2 === 0 ? tokens.router : tokens.viewer;
      return send(cp.url, "/v1/tables/chat?waitSec=30", { headers: { ...bearer(token), "if-none-match": etag, connection: "close" } }).then(
        (answer) => ({ router: i % 2 === 0, answer }),
      );
    });
    await expect.poll(() => cp.engine.publisher.waiting("chat"), { timeout: 10_000 }).toBe(600);
    const lines = (await (await cp.request("/v1/lines", { token: tokens.admin })).json()) as { lines: { id: string; name: string }[] };
    const a = lines.lines.find((l) => l.name === "a")?.id ?? "";
    const patch = await cp.request(`/v1/lines/${a}`, {
      method: "PATCH",
      token: tokens.admin,
      json: { routes: [{ route: "chat", weight: 5 }] },
    });
    expect(patch.status).toBe(200);
    const answers = await Promise.all(polls);
    const newest = String((await send(cp.url, "/v1/tables/chat", { headers: bearer(tokens.viewer) })).headers.etag);
    expect(newest).not.toBe(etag);
    for (const { router, answer } of answers) {
      expect(answer.status).toBe(200);
      expect(answer.headers.etag).toBe(newest);
      expect(answer.body.includes("sk-listener-a")).toBe(router);
      expect(answer.body.includes('"x-extra":"secret"')).toBe(router);
    }
    expect(cp.engine.publisher.waiting("chat")).toBe(0);
  });

  it("reads waitSec as the Hono route does on the quick path too", async () => {
    const etag = String((await send(cp.url, "/v1/tables/chat", { headers: bearer(tokens.router) })).headers.etag);
    const held = { ...bearer(tokens.router), "if-none-match": etag };
    for (const query of ["waitSec=00", "waitSec=0", "waitSec=", "waitSec=0&waitSec=5"]) {
      expect((await same(`/v1/tables/chat?${query}`, { headers: held })).status, query).toBe(304);
    }
    for (const query of ["waitSec=61", "waitSec=100", "waitSec=-1", "waitSec=1.5"]) {
      expect((await same(`/v1/tables/chat?${query}`, { headers: held })).status, query).toBe(400);
    }
    expect((await same("/v1/tables/chat?waitSec=60", { headers: bearer(tokens.viewer) })).status).toBe(200);
  });
});
