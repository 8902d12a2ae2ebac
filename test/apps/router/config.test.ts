import { ConfigError, loadConfig } from "@linewatch/router";
import { describe, expect, it } from "vitest";

describe("loadConfig", () => {
  it("applies the defaults", () => {
    const c = loadConfig({ LINEWATCH_URL: "http://127.0.0.1:8787/" });
    expect(c).toEqual({
      controlPlaneUrl: "http://127.0.0.1:8787",
      token: null,
      routes: [],
      host: "127.0.0.1",
      port: 8788,
      cacheFile: "./.linewatch/router-tables.json",
      upstreamTimeoutMs: 60_000,
      connectTimeoutMs: 5_000,
      waitSec: 30,
      maxBodyBytes: 8 * 1024 * 1024,
      allowUpstreamHosts: [],
      routerId: expect.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]*-\d+-[0-9a-f]{6}$/),
      reportIntervalMs: 5_000,
      reportBacklog: 120,
      inBandCheck: true,
      cutMinTokens: 16,
      retryBudgetPct: 20,
      retryBudgetMin: 10,
      ejectAfterFailures: 3,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it("reads every variable", () => {
    const c = loadConfig({
      LINEWATCH_URL: "https://cp.internal",
      LINEWATCH_TOKEN: " rt-1 ",
      LINEWATCH_ROUTES: "chat-default, embed ,,",
      HOST: "0.0.0.0",
      PORT: "0",
      LINEWATCH_CACHE_FILE: "",
      LINEWATCH_UPSTREAM_TIMEOUT_MS: "1500",
      LINEWATCH_CONNECT_TIMEOUT_MS: "700",
      LINEWATCH_WAIT_SEC: "60",
      LINEWATCH_MAX_BODY_BYTES: "2048",
      LINEWATCH_ALLOW_UPSTREAM_HOSTS: "metadata.internal, 169.254.169.254/32",
    });
    expect(c).toMatchObject({
      controlPlaneUrl: "https://cp.internal",
      token: "rt-1",
      routes: ["chat-default", "embed"],
      host: "0.0.0.0",
      port: 0,
      cacheFile: null,
      upstreamTimeoutMs: 1500,
      connectTimeoutMs: 700,
      waitSec: 60,
      maxBodyBytes: 2048,
      allowUpstreamHosts: ["metadata.internal", "169.254.169.254/32"],
    });
  });

  it.each([
    [{}, /LINEWATCH_URL is required/],
    [{ LINEWATCH_URL: "not a url" }, /LINEWATCH_URL is not a URL/],
    [{ LINEWATCH_URL: "ftp://x" }, /must be http/],
    [{ LINEWATCH_URL: "http://x", PORT: "70000" }, /PORT must be an integer/],
    [{ LINEWATCH_URL: "http://x", LINEWATCH_WAIT_SEC: "61" }, /LINEWATCH_WAIT_SEC/],
    [{ LINEWATCH_URL: "http://x", LINEWATCH_UPSTREAM_TIMEOUT_MS: "1.5" }, /LINEWATCH_UPSTREAM_TIMEOUT_MS/],
    [{ LINEWATCH_URL: "http://x", LINEWATCH_ALLOW_UPSTREAM_HOSTS: "http://a/" }, /LINEWATCH_ALLOW_UPSTREAM_HOSTS/],
  ])("rejects %j naming the variable", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
