// Issue 15 item 4: the upstream guard is wired into the prober's and the router's connections (a
// resolver the test controls stands in for DNS), and every IPv6 form that carries an IPv4 address
// is decoded before the range check, at registration and at connect time.
import type { LookupAddress } from "node:dns";
import { insertLine } from "@linewatch/db";
import { type RunningRouter, startRouter } from "@linewatch/router";
import { embeddedIPv4, silentLogger, upstreamUrlProblem } from "@linewatch/router-client";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../../helpers/control-plane";
import { lineRow } from "../../../helpers/rows";
import { startTableServer, type TableServer, line as tableLine } from "../../../packages/router-client/table-server";
import { expectEnvelope } from "./helpers";
import { startTinyServer, type TinyServer } from "./upstreams";

/** IPv6 spellings of 169.254.169.254 (and of other link-local IPv4 addresses). */
const METADATA_V6 = [
  "::169.254.169.254", // IPv4-compatible
  "::a9fe:a9fe",
  "0:0:0:0:0:0:a9fe:a9fe",
  "64:ff9b::a9fe:a9fe", // NAT64 well-known prefix
  "64:ff9b::169.254.169.254",
  "2002:a9fe:a9fe::1", // 6to4
  "2002:a9fe:a9fe:1234:5678:9abc:def0:1",
  "2001:0:a9fe:a9fe::1", // Teredo, server part
  "2001:0:4136:e378:8000:63bf:5601:5601", // Teredo, client part: ~a9fe:a9fe = 5601:5601
  "::ffff:169.254.0.1", // mapped, elsewhere in 169.254/16
  "64:ff9b::a9fe:1",
];

describe("IPv6 forms that carry an IPv4 address", () => {
  it.each(METADATA_V6)("http://[%s]/ is refused as a base URL", (address) => {
    expect(upstreamUrlProblem(`http://[${address}]/v1`, [])).toMatch(/metadata|link-local/);
  });

  it("are decoded to the IPv4 addresses they carry; other IPv6 addresses carry none", () => {
    expect(embeddedIPv4("64:ff9b::a9fe:a9fe")).toEqual(["169.254.169.254"]);
    expect(embeddedIPv4("::169.254.169.254")).toEqual(["169.254.169.254"]);
    expect(embeddedIPv4("2002:0808:0404::")).toEqual(["8.8.4.4"]);
    expect(embeddedIPv4("2001:0:4136:e378:8000:63bf:3fff:fdd2")).toEqual(["65.54.227.120", "192.0.2.45"]);
    for (const plain of ["::", "::1", "2001:db8::1", "fd00::1", "2606:4700::1111"]) expect(embeddedIPv4(plain), plain).toEqual([]);
  });

  it.each([
    "http://[64:ff9b::808:808]/v1", // NAT64 of 8.8.8.8: an ordinary upstream
    "http://[2002:808:808::1]/v1",
    "http://[::ffff:10.0.0.5]/v1", // a private network stays allowed
    "http://[::1]:8000/v1",
  ])("%s stays allowed", (url) => {
    expect(upstreamUrlProblem(url, [])).toBeNull();
  });

  it("the allow list lets an embedded address through", () => {
    expect(upstreamUrlProblem("http://[64:ff9b::a9fe:a9fe]/v1", ["169.254.169.254"])).toBeNull();
  });
});

// ---- connections ------------------------------------------------------------------------------
let local: TinyServer;
let port: string;
/** What "DNS" answers: names → addresses, as a DNS server (or a rebinding one) would. */
const zone: Record<string, LookupAddress[]> = {
  "model.internal.test": [{ address: "127.0.0.1", family: 4 }],
  "imds.test": [{ address: "169.254.169.254", family: 4 }],
  "rebind.test": [
    { address: "127.0.0.1", family: 4 },
    { address: "169.254.169.254", family: 4 },
  ],
  "nat64.test": [{ address: "64:ff9b::a9fe:a9fe", family: 6 }],
};
const asked: string[] = [];
const resolver = (hostname: string, _o: unknown, cb: (e: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => {
  asked.push(hostname);
  const found = zone[hostname];
  setImmediate(() =>
    found ? cb(null, found) : cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), []),
  );
};
const ANSWER = JSON.stringify({
  id: "x",
  object: "chat.completion",
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello there." }, finish_reason: "stop" }],
});

beforeAll(async () => {
  local = await startTinyServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(ANSWER);
  });
  port = new URL(local.url).port;
});
afterAll(async () => {
  await local.close();
});

describe("the prober's connections", () => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" }, dnsLookup: resolver });
    expect((await cp.request("/v1/routes", { method: "POST", json: { name: "chat" } })).status).toBe(201);
    const sample = {
      name: "s1",
      protocol: "openai-chat",
      request: { messages: [{ role: "user", content: "hi" }] },
      expect: {},
      timeoutMs: 2000,
    };
    expect((await cp.request("/v1/samples", { method: "POST", json: sample })).status).toBe(201);
  });
  afterAll(async () => {
    await cp.stop();
    await cp.testDb.dispose();
  });

  const probe = async (id: string) => {
    const res = await cp.request(`/v1/lines/${id}/probe`, { method: "POST" });
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { results: { errorClass: string | null; reasons: string[]; passed: boolean }[] }).results;
  };
  const register = async (name: string, baseUrl: string) => {
    const res = await cp.request("/v1/lines", {
      method: "POST",
      json: { name, tier: "paid", protocol: "openai-chat", baseUrl, model: "m", routes: [{ route: "chat", weight: 1 }] },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };

  it("resolve names through the guard: a name that resolves to a metadata address is never connected", async () => {
    const good = await register("good", `http://model.internal.test:${port}/v1`);
    const [ok] = await probe(good);
    expect(ok?.errorClass).toBeNull();
    expect(local.requests).toHaveLength(1);
    for (const host of ["imds.test", "rebind.test", "nat64.test"]) {
      const id = await register(host.replace(".", "-"), `http://${host}:${port}/v1`);
      const [r] = await probe(id);
      expect(r?.errorClass, host).toBe("connect");
      expect(JSON.stringify(r?.reasons), host).toMatch(/refused/);
    }
    // rebind.test also resolves to 127.0.0.1: still nothing more reached the local server.
    expect(local.requests).toHaveLength(1);
    expect(asked).toEqual(expect.arrayContaining(["model.internal.test", "imds.test", "rebind.test", "nat64.test"]));
  });

  it("check literal addresses at connect time too (a line stored before the API refused them)", async () => {
    for (const address of ["64:ff9b::a9fe:a9fe", "::169.254.169.254", "2002:a9fe:a9fe::1"]) {
      const res = await cp.request("/v1/lines", {
        method: "POST",
        json: { name: "lit", tier: "paid", protocol: "openai-chat", baseUrl: `http://[${address}]:${port}/v1`, model: "m" },
      });
      const body = await expectEnvelope(res, 400, "invalid_request");
      expect(JSON.stringify(body.error.details)).toMatch(/baseUrl/);
      const stored = await insertLine(
        cp.database.db,
        lineRow(`stored-${address.replace(/[:.]/g, "-")}`, { baseUrl: `http://[${address}]:${port}/v1` }),
      );
      await cp.engine.registry.changed();
      const [r] = await probe(stored.id);
      expect(r?.errorClass, address).toBe("connect");
      expect(JSON.stringify(r?.reasons), address).toMatch(/refused: .*169\.254\.169\.254/);
    }
  });
});

describe("webhook deliveries' connections (issue 26)", () => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" }, dnsLookup: resolver });
  });
  afterAll(async () => {
    await cp.stop();
    await cp.testDb.dispose();
  });

  const sink = async (name: string, url: string) => {
    const res = await cp.request("/v1/webhooks", { method: "POST", json: { name, url, secret: "whsec-guard-0123456789" } });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const test = async (id: string) =>
    (await (await cp.request(`/v1/webhooks/${id}/test`, { method: "POST" })).json()) as { ok: boolean; error: string | null };

  it("go through the same guard: a name that resolves to a metadata address, or a stored literal one, is never connected", async () => {
    const before = local.requests.length;
    expect(await test(await sink("good", `http://model.internal.test:${port}/hook`))).toMatchObject({ ok: true, error: null });
    expect(local.requests).toHaveLength(before + 1);
    for (const host of ["imds.test", "rebind.test", "nat64.test"]) {
      const result = await test(await sink(host.replace(".", "-"), `http://${host}:${port}/hook`));
      expect(result.ok, host).toBe(false);
      expect(result.error, host).toMatch(/refused: .*169\.254\.169\.254/);
    }
    // A URL the API refuses, stored anyway (an earlier version, a hand edit): refused when connecting.
    const stored = await sink("stored", `http://model.internal.test:${port}/hook`);
    await cp.database.db.execute(sql`update webhooks set url = ${`http://[64:ff9b::a9fe:a9fe]:${port}/hook`} where id = ${stored}`);
    expect((await test(stored)).error).toMatch(/refused: .*169\.254\.169\.254/);
    expect(local.requests).toHaveLength(before + 1);
  });
});

describe("the router's upstream connections", () => {
  let tables: TableServer;
  let router: RunningRouter;
  beforeAll(async () => {
    tables = await startTableServer({ routerToken: "rt" });
    const at = (host: string, name: string, weight: number) =>
      tableLine(name, weight, { baseUrl: `http://${host}:${port}/v1`, model: "m", apiKey: `sk-${name}` });
    tables.publish("evil-only", [at("imds.test", "evil", 10000)]);
    // rng 0 picks the first line: the refused one, then the retry goes to the good one.
    tables.publish("evil-first", [at("rebind.test", "evil", 5000), at("model.internal.test", "good", 5000)]);
    tables.publish("literal", [at("[64:ff9b::a9fe:a9fe]", "nat64", 10000)]);
    router = await startRouter({
      controlPlaneUrl: tables.url,
      token: "rt",
      routes: ["evil-only", "evil-first", "literal"],
      port: 0,
      cacheFile: null,
      upstreamTimeoutMs: 2000,
      logger: silentLogger,
      rng: () => 0,
      processMetrics: false,
      dnsLookup: resolver,
    });
  });
  afterAll(async () => {
    await router?.close();
    await tables?.close();
  });

  const chat = (model: string) =>
    fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    });

  it("never connect to a name that resolves to a metadata address, nor to a literal IPv6 form of one", async () => {
    const before = local.requests.length;
    for (const route of ["evil-only", "literal"]) {
      const res = await chat(route);
      expect(res.status, route).toBeGreaterThanOrEqual(500);
      await res.body?.cancel();
    }
    expect(local.requests.length).toBe(before);
    // A refused line is a connect error like any other: the retry goes to a line that may be reached.
    const res = await chat("evil-first");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-linewatch-line")).toBe("good");
    await res.body?.cancel();
    expect(local.requests.length).toBe(before + 1);
  });
});
