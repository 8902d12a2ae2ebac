// Upstream API keys (docs/roles.md): encrypted at rest, and never in a response to a non-router token, a
// log line, an event, an error message or the dashboard. Every secret below is a distinct string that
// is searched for in everything the control plane says, logs and stores.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../../apps/control-plane/src/config";
import { createLogger } from "../../../../apps/control-plane/src/logger";
import { createSecretBox, loadOrCreateSecretKey, redactSecrets } from "../../../../apps/control-plane/src/secrets";
import { startTestControlPlane, type TestControlPlane } from "../../../helpers/control-plane";
import { createTokens, hexKey, type Operation, openApiOperations, queryRows, type Tokens } from "./helpers";
import { startKeyEchoUpstream, type TinyServer } from "./upstreams";

const SECRET_KEY = hexKey("5e");
/** The lab line's key (probes must pass with it: it really is sent upstream). */
const LAB_KEY = "sk-lab-7f3a9c1e5b2d4f60";
/** The echoing upstream's keys: the first is replaced by PATCH, the second is current. */
const ECHO_KEY_OLD = "sk-echo-old-31415926535";
const ECHO_KEY = "sk-echo-new-27182818284";
/** Only ever sent in requests that fail: it must not come back or be logged. */
const REJECTED_KEY = "sk-rejected-161803398874";
const HEADER_SECRET = "hdr-secret-0c0ffee0c0ffee";
/** Header values on the lab line: every header value is a secret, whatever its name (issue 15 item 3). */
const LAB_HEADERS = { "x-api-key": "sk-ant-hdr-5a5a5a5a5a", "api-key": "azure-hdr-6b6b6b6b6b", "X-Org": "org-hdr-7c7c7c7c7c" };
/** A webhook sink's signing secret (issue 26): sealed like a key, never returned. */
const WEBHOOK_SECRET = "whsec-sealed-9e9e9e9e9e9e";
const WEBHOOK_SECRET_REJECTED = "whsec-rejected-8d8d8d8d8d";
const SECRETS = [
  LAB_KEY,
  ECHO_KEY_OLD,
  ECHO_KEY,
  REJECTED_KEY,
  HEADER_SECRET,
  WEBHOOK_SECRET,
  WEBHOOK_SECRET_REJECTED,
  ...Object.values(LAB_HEADERS),
];

let cp: TestControlPlane;
let lab: Lab;
let echo: TinyServer;
let tokens: Tokens;
let ops: Operation[];
const logs: string[] = [];
/** Every response body the test saw, by what was asked. */
const seen: { what: string; body: string }[] = [];
const ids = { lab: "", echo: "", sample: "", webhook: "" };

async function send(what: string, path: string, init: Parameters<TestControlPlane["request"]>[1] = {}): Promise<Response> {
  const res = await cp.request(path, init);
  const body = await res.clone().text();
  seen.push({ what: `${what} → ${res.status}`, body });
  return res;
}

const containsSecret = (text: string) => SECRETS.filter((s) => text.includes(s));

beforeAll(async () => {
  lab = await startLab({ lines: [{ name: "keyed", apiKey: LAB_KEY }] });
  echo = await startKeyEchoUpstream();
  cp = await startTestControlPlane({ secretKey: SECRET_KEY, logger: createLogger("debug", (line) => logs.push(line)) });
  tokens = await createTokens(cp);
  const token = tokens.admin;
  await send("create route", "/v1/routes", { method: "POST", json: { name: "chat" }, token });
  const base = { tier: "paid", protocol: "openai-chat", model: "lab-model", routes: [{ route: "chat", weight: 1 }] };
  const labLine = await send("create lab line", "/v1/lines", {
    method: "POST",
    json: { ...base, name: "keyed", baseUrl: lab.baseUrl("keyed"), apiKey: LAB_KEY, headers: LAB_HEADERS },
    token,
  });
  ids.lab = ((await labLine.json()) as { id: string }).id;
  const echoLine = await send("create echo line", "/v1/lines", {
    method: "POST",
    json: { ...base, name: "echo", baseUrl: `${echo.url}/v1`, apiKey: ECHO_KEY_OLD, headers: { "x-api-token": HEADER_SECRET } },
    token,
  });
  ids.echo = ((await echoLine.json()) as { id: string }).id;
  await send("patch echo key", `/v1/lines/${ids.echo}`, { method: "PATCH", json: { apiKey: ECHO_KEY }, token });

  // Failures that carry a key: each must be refused without echoing it.
  const bad = { ...base, name: "bad", baseUrl: "http://127.0.0.1:9/v1", apiKey: REJECTED_KEY };
  await send("duplicate name", "/v1/lines", { method: "POST", json: { ...bad, name: "echo" }, token });
  await send("bad tier", "/v1/lines", { method: "POST", json: { ...bad, tier: "gold" }, token });
  await send("key in the URL", "/v1/lines", {
    method: "POST",
    json: { ...bad, baseUrl: `http://user:${REJECTED_KEY}@127.0.0.1:9/v1` },
    token,
  });
  await send("key too long", "/v1/lines", { method: "POST", json: { ...bad, apiKey: REJECTED_KEY + "x".repeat(5000) }, token });
  await send("misspelt field", "/v1/lines", { method: "POST", json: { ...bad, apiKey: undefined, apikey: REJECTED_KEY }, token });
  await send("unknown route", "/v1/lines", { method: "POST", json: { ...bad, routes: [{ route: "nope", weight: 1 }] }, token });
  await send("NUL in the key", "/v1/lines", { method: "POST", json: { ...bad, apiKey: `${REJECTED_KEY}\u0000` }, token });
  await send("patch unknown line", "/v1/lines/00000000-0000-4000-8000-000000000000", {
    method: "PATCH",
    json: { apiKey: REJECTED_KEY },
    token,
  });
  await send("patch with a bad field", `/v1/lines/${ids.echo}`, { method: "PATCH", json: { apiKey: REJECTED_KEY, tier: 7 }, token });
  await send("malformed JSON", "/v1/lines", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: `{"apiKey": "${REJECTED_KEY}", "name": `,
    token,
  });
  await send("not JSON at all", "/v1/lines", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: REJECTED_KEY,
    token,
  });
  await send("viewer writes a key", "/v1/lines", { method: "POST", json: bad, token: tokens.viewer });
  await send("key as a token", "/v1/lines", { token: REJECTED_KEY });

  const sink = await send("create webhook", "/v1/webhooks", {
    method: "POST",
    json: { name: "oncall", url: "http://127.0.0.1:9/hook", secret: WEBHOOK_SECRET },
    token,
  });
  ids.webhook = ((await sink.json()) as { id: string }).id;
  const hook = { name: "oncall-2", url: "http://127.0.0.1:9/hook", secret: WEBHOOK_SECRET_REJECTED };
  await send("duplicate webhook", "/v1/webhooks", { method: "POST", json: { ...hook, name: "oncall" }, token });
  await send("webhook to the metadata service", "/v1/webhooks", {
    method: "POST",
    json: { ...hook, url: "http://169.254.169.254/" },
    token,
  });
  await send("webhook with a bad format", "/v1/webhooks", { method: "POST", json: { ...hook, format: "xml" }, token });
  await send("viewer creates a webhook", "/v1/webhooks", { method: "POST", json: hook, token: tokens.viewer });
  await send("test the webhook", `/v1/webhooks/${ids.webhook}/test`, { method: "POST", token });

  // Probes send the keys upstream; the echoing upstream answers 401 with the key in its body.
  await send("probe lab line", `/v1/lines/${ids.lab}/probe`, { method: "POST", token });
  await send("probe echo line", `/v1/lines/${ids.echo}/probe`, { method: "POST", token });
  ops = await openApiOperations(cp);
  const samples = (await (await cp.request("/v1/samples", { token })).json()) as { samples: { id: string }[] };
  ids.sample = samples.samples[0]!.id;
}, 120_000);

afterAll(async () => {
  await cp?.stop();
  await cp?.testDb.dispose();
  await lab?.close();
  await echo?.close();
});

describe("the keys are really used", () => {
  it("reach the upstreams: the lab accepts its key, the echoing upstream received the current one", async () => {
    const health = (await (await cp.request(`/v1/lines/${ids.lab}/health`, { token: tokens.admin })).json()) as {
      recent: { status: number }[];
    };
    expect(health.recent.length).toBeGreaterThan(0);
    expect(health.recent.every((r) => r.status === 200)).toBe(true);
    expect(echo.requests.length).toBeGreaterThan(0);
    expect(echo.requests.every((r) => r.headers.authorization === `Bearer ${ECHO_KEY}`)).toBe(true);
    expect(echo.requests.every((r) => r.headers["x-api-token"] === HEADER_SECRET)).toBe(true);
  });

  it("go to a router token in the table (the positive control for every search below)", async () => {
    // The echo line failed every probe and left the table; the lab line carries its key there.
    const text = await (await cp.request("/v1/tables/chat", { token: tokens.router })).text();
    expect(text).toContain(LAB_KEY);
    for (const value of Object.values(LAB_HEADERS)) expect(text).toContain(value);
  });

  it("come back as header names with hasValue, never the values", async () => {
    const line = (await (await cp.request(`/v1/lines/${ids.lab}`, { token: tokens.admin })).json()) as { headers: unknown };
    expect(line.headers).toEqual({ "x-api-key": { hasValue: true }, "api-key": { hasValue: true }, "X-Org": { hasValue: true } });
  });
});

describe("never in", () => {
  it("a response to an admin or viewer token, on any GET the API describes, nor the dashboard, docs or metrics", async () => {
    const paths = ops
      .filter((o) => o.method === "GET")
      .flatMap((o) => {
        if (o.path.startsWith("/v1/samples/")) return [o.path.replace("{id}", ids.sample)];
        if (o.path.startsWith("/v1/webhooks/")) return [o.path.replace("{id}", ids.webhook)];
        if (o.path.includes("{id}")) return [ids.lab, ids.echo].map((id) => o.path.replace("{id}", id));
        return [o.path.replace("{route}", "chat").replace("{name}", "chat")];
      });
    for (const path of [...paths, "/v1/events?limit=500", "/", "/docs", "/openapi.json", "/metrics", "/readyz"]) {
      for (const role of ["admin", "viewer"] as const) {
        const res = await send(`${role} GET ${path}`, path, { token: tokens[role] });
        const adminOnly = path.startsWith("/v1/tokens") || path.startsWith("/v1/webhooks");
        expect(res.status, `${role} GET ${path}`).toBe(role === "viewer" && adminOnly ? 403 : 200);
      }
    }
    const leaks = seen.filter((s) => containsSecret(s.body).length > 0).map((s) => `${s.what}: ${containsSecret(s.body).join(", ")}`);
    expect(leaks).toEqual([]);
  });

  it("an error message (every refused request above was answered without the key)", () => {
    const refused = seen.filter((s) => / → [45]\d\d$/.test(s.what));
    expect(refused.length).toBeGreaterThanOrEqual(17);
    for (const r of refused) {
      expect(JSON.parse(r.body), r.what).toHaveProperty("error.code");
      expect(containsSecret(r.body), r.what).toEqual([]);
    }
  });

  it("a probe result, even when the upstream echoes the key (it is redacted before it is stored)", async () => {
    const health = (await (await cp.request(`/v1/lines/${ids.echo}/health`, { token: tokens.admin })).json()) as {
      recent: { status: number; excerpt: string; reasons: string[]; hardFailure: boolean }[];
    };
    expect(health.recent.length).toBeGreaterThan(0);
    for (const r of health.recent) {
      expect(r.status).toBe(401);
      expect(r.hardFailure).toBe(true);
      expect(r.excerpt).toContain("[redacted]");
      expect(containsSecret(r.excerpt + r.reasons.join(" "))).toEqual([]);
      expect(r.excerpt + r.reasons.join(" ")).not.toContain(HEADER_SECRET);
    }
  });

  it("a log line (captured at debug level)", () => {
    const text = logs.join("");
    expect(logs.length).toBeGreaterThan(0);
    expect(containsSecret(text)).toEqual([]);
  });

  it("an event", async () => {
    const events = await send("events", "/v1/events?limit=500", { token: tokens.admin });
    const body = (await events.json()) as { events: unknown[] };
    expect(body.events.length).toBeGreaterThan(0);
    expect(containsSecret(JSON.stringify(body))).toEqual([]);
    const rows = await queryRows(cp.database, "select * from events");
    expect(containsSecret(JSON.stringify(rows))).toEqual([]);
  });

  it("the database in plain text: every row of every table, and the key column is sealed", async () => {
    const tables = await queryRows<{ table_name: string }>(
      cp.database,
      "select table_name from information_schema.tables where table_schema = 'public'",
    );
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(["lines", "probe_results", "events", "published_tables", "tokens", "webhooks", "webhook_deliveries"]),
    );
    for (const { table_name } of tables) {
      const rows = await queryRows<{ row: string }>(cp.database, `select t::text as row from "${table_name}" t`);
      expect(containsSecret(rows.map((r) => r.row).join("\n")), table_name).toEqual([]);
    }
    const lines = await queryRows<{ name: string; api_key_enc: string; headers_enc: string }>(
      cp.database,
      "select name, api_key_enc, headers_enc from lines order by name",
    );
    const box = createSecretBox(SECRET_KEY);
    expect(lines.map((l) => [l.name, l.api_key_enc.startsWith("v1:"), box.decrypt(l.api_key_enc)])).toEqual([
      ["echo", true, ECHO_KEY],
      ["keyed", true, LAB_KEY],
    ]);
    expect(lines.map((l) => JSON.parse(box.decrypt(l.headers_enc)))).toEqual([{ "x-api-token": HEADER_SECRET }, LAB_HEADERS]);
    const sinks = await queryRows<{ name: string; secret_enc: string }>(cp.database, "select name, secret_enc from webhooks");
    expect(sinks.map((w) => [w.name, w.secret_enc.startsWith("v1:"), box.decrypt(w.secret_enc)])).toEqual([
      ["oncall", true, WEBHOOK_SECRET],
    ]);
  });
});

describe("the secret key", () => {
  it("is generated once into the data directory (mode 0600) with a warning, then reused silently", () => {
    const dir = mkdtempSync(join(tmpdir(), "lw-key-"));
    try {
      const warned: string[] = [];
      const logger = createLogger("debug", (l) => warned.push(l));
      const first = loadOrCreateSecretKey(join(dir, "data"), logger);
      expect(first).toMatch(/^[0-9a-f]{64}$/);
      expect(warned.join("")).toContain("LINEWATCH_SECRET_KEY is not set");
      expect(warned.join("")).not.toContain(first);
      const file = join(dir, "data", "secret.key");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readFileSync(file, "utf8").trim()).toBe(first);
      warned.length = 0;
      expect(loadOrCreateSecretKey(join(dir, "data"), logger)).toBe(first);
      expect(warned).toEqual([]);
      // A damaged key file stops the start instead of sealing keys nobody can open again.
      writeFileSync(file, "not a key\n");
      expect(() => loadOrCreateSecretKey(join(dir, "data"), logger)).toThrow(/secret\.key: must be 32 bytes/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is checked by the configuration, without echoing a bad value", () => {
    const bad = "my-secret-passphrase-that-is-not-a-key";
    let message = "";
    try {
      loadConfig({ LINEWATCH_SECRET_KEY: bad });
    } catch (error) {
      message = String(error);
    }
    expect(message).toContain("LINEWATCH_SECRET_KEY");
    expect(message).not.toContain(bad);
    expect(() => loadConfig({ LINEWATCH_SECRET_KEY_PREVIOUS: "abc" })).toThrow(/LINEWATCH_SECRET_KEY_PREVIOUS/);
    expect(loadConfig({ LINEWATCH_SECRET_KEY: hexKey("ab") }).secretKey).toBe(hexKey("ab"));
    expect(loadConfig({ LINEWATCH_SECRET_KEY: Buffer.alloc(32, 7).toString("base64") }).secretKey).toBeDefined();
  });

  it("seals with AES-256-GCM: a fresh IV each time, and a tampered or foreign ciphertext does not open", () => {
    const box = createSecretBox(hexKey("01"));
    const a = box.encrypt("sk-same");
    const b = box.encrypt("sk-same");
    expect(a).not.toBe(b);
    expect(box.decrypt(a)).toBe("sk-same");
    const parts = a.split(":");
    const data = Buffer.from(parts[3]!, "base64url");
    data[0] = (data[0] ?? 0) ^ 1;
    expect(() => box.decrypt([parts[0], parts[1], parts[2], data.toString("base64url")].join(":"))).toThrow();
    expect(() => createSecretBox(hexKey("02")).decrypt(a)).toThrow(/cannot decrypt/);
    expect(() => box.decrypt("sk-plain-text")).toThrow();
  });

  it("redacts what an upstream echoes, and leaves short values alone", () => {
    expect(redactSecrets("bad key sk-123456 and sk-123456 again", ["sk-123456"])).toBe("bad key [redacted] and [redacted] again");
    expect(redactSecrets("a b c", ["b", null, undefined])).toBe("a b c");
  });
});
