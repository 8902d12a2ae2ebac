// Upstream URL guard: a line's baseUrl is where its key is sent, so it must not reach cloud metadata
// or anything link-local, literally, through a DNS name, or through an upstream's redirect.
import type { LookupAddress } from "node:dns";
import { createGuardedLookup, upstreamUrlProblem } from "@linewatch/router-client";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../../apps/control-plane/src/config";
import { createProbeAgent } from "../../../../apps/control-plane/src/prober/send-probe";
import { startTestControlPlane, type TestControlPlane } from "../../../helpers/control-plane";
import { expectEnvelope, queryRows } from "./helpers";
import { startTinyServer, type TinyServer } from "./upstreams";

describe("upstreamUrlProblem", () => {
  it.each([
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.170.2/v2/credentials",
    "http://169.254.0.1:8080/v1",
    "https://169.254.255.255/v1",
    "http://2852039166/v1", // 169.254.169.254 as one number
    "http://0xa9.0xfe.0xa9.0xfe/v1", // in hex
    "http://0251.0376.0251.0376/v1", // in octal
    "http://169.254.169.254./v1", // trailing dot
    "http://[::ffff:169.254.169.254]/v1", // IPv4-mapped IPv6
    "http://[::ffff:a9fe:a9fe]/v1",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://[fd00:ec2:0:0:0:0:0:254]/latest",
    "http://[fe80::1]/v1",
    "http://[febf:ffff::1]/v1",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.Google.Internal./computeMetadata/v1/",
    "http://metadata/computeMetadata/v1/",
    "http://instance-data.ec2.internal/latest",
    "http://100.100.100.200/latest/meta-data/", // Alibaba Cloud
  ])("refuses %s", (url) => {
    expect(upstreamUrlProblem(url, [])).toMatch(/metadata|link-local/);
  });

  it.each([
    "ftp://example.com/v1",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "gopher://127.0.0.1:6379/_",
    "ws://example.com/v1",
    "not a url",
    "//example.com/v1",
  ])("refuses the non-http(s) %s", (url) => {
    expect(upstreamUrlProblem(url, [])).toBe("must be an http(s) URL");
  });

  it("refuses credentials in the URL", () => {
    expect(upstreamUrlProblem("https://user:sk-123@api.example.com/v1", [])).toMatch(/credentials/);
  });

  it.each([
    "https://api.openai.com/v1",
    "http://127.0.0.1:8000/v1", // a model on this host
    "http://[::1]:8000/v1",
    "http://10.0.0.5:8000/v1", // a private network: self-hosted models live there
    "http://192.168.1.20/v1",
    "http://169.253.255.255/v1", // just outside 169.254/16
    "http://169.255.0.1/v1",
    "http://[fec0::1]/v1",
    "http://metadata.example.com/v1", // a name that merely starts with "metadata"
  ])("allows %s", (url) => {
    expect(upstreamUrlProblem(url, [])).toBeNull();
  });

  it("lets LINEWATCH_ALLOW_UPSTREAM_HOSTS allow names, addresses and CIDRs", () => {
    const allow = loadConfig({
      LINEWATCH_ALLOW_UPSTREAM_HOSTS: "metadata.google.internal, 169.254.169.254 ,169.254.10.0/24,fd00:ec2::/64",
    }).allowUpstreamHosts;
    expect(upstreamUrlProblem("http://metadata.google.internal/x", allow)).toBeNull();
    expect(upstreamUrlProblem("http://169.254.169.254/x", allow)).toBeNull();
    expect(upstreamUrlProblem("http://[::ffff:169.254.169.254]/x", allow)).toBeNull();
    expect(upstreamUrlProblem("http://169.254.10.77/x", allow)).toBeNull();
    expect(upstreamUrlProblem("http://[fd00:ec2::254]/x", allow)).toBeNull();
    expect(upstreamUrlProblem("http://169.254.11.1/x", allow)).toMatch(/link-local/);
    expect(upstreamUrlProblem("http://metadata/x", allow)).toMatch(/metadata/);
  });

  it("is configured with entries that are checked at start", () => {
    expect(() => loadConfig({ LINEWATCH_ALLOW_UPSTREAM_HOSTS: "169.254.0.0/99" })).toThrow(/LINEWATCH_ALLOW_UPSTREAM_HOSTS/);
    expect(() => loadConfig({ LINEWATCH_ALLOW_UPSTREAM_HOSTS: "http://169.254.169.254/" })).toThrow(/not a host name, address or CIDR/);
    expect(loadConfig({}).allowUpstreamHosts).toEqual([]);
  });
});

describe("the line API", () => {
  let cp: TestControlPlane;
  let allowing: TestControlPlane | null = null;
  const line = (baseUrl: string, name = "guarded") => ({ name, tier: "paid", protocol: "openai-chat", baseUrl, model: "m" });

  beforeAll(async () => {
    cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" } });
  });
  afterAll(async () => {
    await cp.stop();
    await cp.testDb.dispose();
    if (allowing) {
      await allowing.stop();
      await allowing.testDb.dispose();
    }
  });

  it("refuses a metadata or link-local baseUrl on create and on change, naming baseUrl, and stores nothing", async () => {
    for (const url of [
      "http://169.254.169.254/latest",
      "http://[fd00:ec2::254]/",
      "http://metadata.google.internal/",
      "http://[::ffff:a9fe:a9fe]/",
    ]) {
      const body = await expectEnvelope(await cp.request("/v1/lines", { method: "POST", json: line(url) }), 400, "invalid_request");
      expect(body.error.details).toEqual([expect.objectContaining({ field: "baseUrl" })]);
    }
    expect(await queryRows(cp.database, "select * from lines")).toEqual([]);
    const ok = await cp.request("/v1/lines", { method: "POST", json: line("http://127.0.0.1:9/v1") });
    expect(ok.status).toBe(201);
    const { id } = (await ok.json()) as { id: string };
    await expectEnvelope(
      await cp.request(`/v1/lines/${id}`, { method: "PATCH", json: { baseUrl: "http://169.254.169.254/" } }),
      400,
      "invalid_request",
    );
    expect(((await (await cp.request(`/v1/lines/${id}`)).json()) as { baseUrl: string }).baseUrl).toBe("http://127.0.0.1:9/v1");
  });

  it("accepts it when LINEWATCH_ALLOW_UPSTREAM_HOSTS says so", async () => {
    allowing = await startTestControlPlane({
      env: { LINEWATCH_SHIPPED_SAMPLES: "false", LINEWATCH_ALLOW_UPSTREAM_HOSTS: "169.254.169.254" },
    });
    expect((await allowing.request("/v1/lines", { method: "POST", json: line("http://169.254.169.254/v1") })).status).toBe(201);
    expect((await allowing.request("/v1/lines", { method: "POST", json: line("http://169.254.169.253/v1", "other") })).status).toBe(400);
  });
});

describe("redirects", () => {
  let cp: TestControlPlane;
  let target: TinyServer;
  let redirecting: TinyServer;
  let toMetadata: TinyServer;

  beforeAll(async () => {
    // The "target" stands in for 169.254.169.254: a local server that must never see a request.
    target = await startTinyServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: "instance credentials" } }] }));
    });
    redirecting = await startTinyServer((req, res) => {
      res.writeHead(302, { location: `${target.url}${req.url ?? "/"}` });
      res.end();
    });
    toMetadata = await startTinyServer((_req, res) => {
      res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/iam/security-credentials/" });
      res.end();
    });
    cp = await startTestControlPlane({ env: { LINEWATCH_SHIPPED_SAMPLES: "false" } });
    await cp.request("/v1/samples", {
      method: "POST",
      json: {
        name: "hi",
        protocol: "openai-chat",
        request: { messages: [{ role: "user", content: "hi" }] },
        expect: { minLength: 1 },
        timeoutMs: 3000,
      },
    });
  });
  afterAll(async () => {
    await cp.stop();
    await cp.testDb.dispose();
    await Promise.all([target.close(), redirecting.close(), toMetadata.close()]);
  });

  it("are not followed: the probe records the 3xx as a hard failure and nothing reaches the target", async () => {
    for (const [name, upstream, status] of [
      ["to-local", redirecting, 302],
      ["to-metadata", toMetadata, 307],
    ] as const) {
      const res = await cp.request("/v1/lines", {
        method: "POST",
        json: { name, tier: "paid", protocol: "openai-chat", baseUrl: `${upstream.url}/v1`, model: "m" },
      });
      const { id } = (await res.json()) as { id: string };
      const probe = await cp.request(`/v1/lines/${id}/probe`, { method: "POST" });
      const { results } = (await probe.json()) as { results: { status: number; hardFailure: boolean; passed: boolean; score: number }[] };
      expect(results).toEqual([expect.objectContaining({ status, hardFailure: true, passed: false, score: 0 })]);
      expect(upstream.requests).toHaveLength(1);
    }
    expect(target.requests).toEqual([]);
  });

  it("are not followed by the prober's agent itself either (undici's request has no redirect interceptor)", async () => {
    const agent = createProbeAgent([]);
    try {
      const res = await request(`${redirecting.url}/v1/chat/completions`, { method: "POST", body: "{}", dispatcher: agent });
      expect(res.statusCode).toBe(302);
      await res.body.dump();
      expect(target.requests).toEqual([]);
    } finally {
      await agent.close();
    }
  });
});

describe("DNS names that resolve to link-local addresses", () => {
  let local: TinyServer;
  /** A resolver the test controls: names → addresses, as a DNS server (or a rebinding one) would answer. */
  const zone: Record<string, LookupAddress[]> = {
    "model.internal.test": [{ address: "127.0.0.1", family: 4 }],
    "rebind.test": [
      { address: "127.0.0.1", family: 4 },
      { address: "169.254.169.254", family: 4 },
    ],
    "imds6.test": [{ address: "fd00:ec2::254", family: 6 }],
    "mapped.test": [{ address: "::ffff:169.254.169.254", family: 6 }],
    "allowed-metadata.test": [{ address: "169.254.169.254", family: 4 }],
  };
  const resolver = (hostname: string, _o: unknown, cb: (e: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => {
    const found = zone[hostname];
    setImmediate(() =>
      found ? cb(null, found) : cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), []),
    );
  };

  beforeAll(async () => {
    local = await startTinyServer((_req, res) => res.end("ok"));
  });
  afterAll(async () => {
    await local.close();
  });

  it("are refused by the guarded lookup before any connection; ordinary names connect", async () => {
    const port = new URL(local.url).port;
    const agent = new Agent({ connect: { timeout: 2_000, lookup: createGuardedLookup([], resolver) } });
    try {
      const ok = await request(`http://model.internal.test:${port}/`, { dispatcher: agent });
      expect(ok.statusCode).toBe(200);
      await ok.body.dump();
      expect(local.requests).toHaveLength(1);
      for (const name of ["rebind.test", "imds6.test", "mapped.test", "allowed-metadata.test"]) {
        await expect(request(`http://${name}:${port}/`, { dispatcher: agent }), name).rejects.toThrow(/refused: .*(link-local|metadata)/);
      }
      // "rebind.test" also resolves to 127.0.0.1, first: still nothing reached the local server.
      expect(local.requests).toHaveLength(1);
      await expect(request(`http://nowhere.test:${port}/`, { dispatcher: agent })).rejects.toThrow(/ENOTFOUND/);
    } finally {
      await agent.close();
    }
  });

  it("are allowed by name or address through the allow list", async () => {
    const lookup = createGuardedLookup(["allowed-metadata.test", "127.0.0.0/8", "169.254.169.254"], resolver);
    const resolved = (name: string) =>
      new Promise<string>((resolve, reject) => lookup(name, {}, (error, address) => (error ? reject(error) : resolve(String(address)))));
    expect(await resolved("allowed-metadata.test")).toBe("169.254.169.254");
    expect(await resolved("rebind.test")).toBe("127.0.0.1");
    await expect(resolved("imds6.test")).rejects.toThrow(/metadata/);
    const all = await new Promise<LookupAddress[]>((resolve, reject) =>
      lookup("rebind.test", { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses as LookupAddress[]))),
    );
    expect(all.map((a) => a.address)).toEqual(["127.0.0.1", "169.254.169.254"]);
  });
});
