// Rotating LINEWATCH_SECRET_KEY (README "Run it for real"): replicas run with the new key and the
// previous one, `npm run rotate-secret` re-seals every line key, then the previous key goes.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { type Database, insertWebhook, replaceLineApiKeyEnc } from "@linewatch/db";
import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../../apps/control-plane/src/config";
import { silentLogger } from "../../../../apps/control-plane/src/logger";
import { rotateLineKeys, rotateWebhookSecrets } from "../../../../apps/control-plane/src/rotate-secret";
import { createSecretBox, type SecretBox } from "../../../../apps/control-plane/src/secrets";
import { type ControlPlane, serveControlPlane } from "../../../../apps/control-plane/src/server";
import { createTestDatabase, type TestDatabase } from "../../../helpers/test-db";
import { hexKey, queryRows } from "./helpers";

const run = promisify(execFile);
const OLD = hexKey("0a");
const NEW = hexKey("0b");
const KEYS: Record<string, string> = { "lab-a": "sk-rot-aaaaaaaaaaaa", "lab-b": "sk-rot-bbbbbbbbbbbb", "far-c": "sk-rot-cccccccccccc" };

let lab: Lab;
let testDb: TestDatabase;

/** A control plane on the test database with the given secret box (the test helper knows one key only). */
async function start(secrets: SecretBox): Promise<ControlPlane & { stop(): Promise<void> }> {
  const database = await testDb.open();
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    LINEWATCH_SCHEDULER: "false",
    LINEWATCH_SHIPPED_SAMPLES: "false",
  });
  const cp = await serveControlPlane({ config, database, clock: { now: () => Date.now() }, logger: silentLogger, secrets });
  return {
    ...cp,
    stop: async () => {
      await cp.close();
      await database.close();
    },
  };
}

const api = (cp: ControlPlane, path: string, init: { method?: string; json?: unknown } = {}) =>
  fetch(`${cp.url}${path}`, {
    method: init.method ?? "GET",
    headers: init.json === undefined ? {} : { "content-type": "application/json" },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });

/** The sealed keys by line name, read on `open` or on a connection of its own (PGlite: one at a time). */
async function sealedRows(open?: Database): Promise<Map<string, string>> {
  const db = open ?? (await testDb.open());
  try {
    const rows = await queryRows<{ name: string; api_key_enc: string | null }>(db, "select name, api_key_enc from lines order by name");
    return new Map(rows.filter((r) => r.api_key_enc).map((r) => [r.name, r.api_key_enc as string]));
  } finally {
    if (!open) await db.close();
  }
}

/** In open mode a router's view is credential-free, so read the keys the way the prober does. */
async function decryptedKeys(cp: ControlPlane): Promise<Record<string, string | null>> {
  cp.engine.registry.invalidate();
  const snapshot = await cp.engine.registry.get();
  return Object.fromEntries([...snapshot.lines.values()].map((l) => [l.name, l.apiKey]));
}

beforeAll(async () => {
  lab = await startLab({
    lines: [
      { name: "lab-a", apiKey: KEYS["lab-a"] },
      { name: "lab-b", apiKey: KEYS["lab-b"] },
    ],
  });
  testDb = await createTestDatabase({ persistent: true });
  const cp = await start(createSecretBox(OLD));
  try {
    await api(cp, "/v1/routes", { method: "POST", json: { name: "chat" } });
    await api(cp, "/v1/samples", {
      method: "POST",
      json: { name: "hi", protocol: "openai-chat", request: { messages: [{ role: "user", content: "Say hi" }] }, expect: { minLength: 1 } },
    });
    const line = (name: string, baseUrl: string, apiKey?: string) => ({
      name,
      tier: "paid",
      protocol: "openai-chat",
      baseUrl,
      model: "lab-model",
      routes: [{ route: "chat", weight: 1 }],
      ...(apiKey ? { apiKey } : {}),
    });
    for (const name of ["lab-a", "lab-b"])
      expect((await api(cp, "/v1/lines", { method: "POST", json: line(name, lab.baseUrl(name), KEYS[name]) })).status).toBe(201);
    expect((await api(cp, "/v1/lines", { method: "POST", json: line("far-c", "http://127.0.0.1:9/v1", KEYS["far-c"]) })).status).toBe(201);
    expect((await api(cp, "/v1/lines", { method: "POST", json: line("keyless", "http://127.0.0.1:9/v1") })).status).toBe(201);
  } finally {
    await cp.stop();
  }
}, 120_000);

afterAll(async () => {
  await lab?.close();
  await testDb?.dispose();
});

describe("rotating the secret key", () => {
  it("runs with the new key plus the previous one, re-seals every row, then needs only the new key", async () => {
    const before = await sealedRows();
    expect([...before.keys()]).toEqual(["far-c", "lab-a", "lab-b"]);

    // 1. Replicas restart with LINEWATCH_SECRET_KEY=new, LINEWATCH_SECRET_KEY_PREVIOUS=old: old rows still open.
    let cp = await start(createSecretBox(NEW, OLD));
    try {
      expect(await decryptedKeys(cp)).toMatchObject(KEYS);
      // A key written meanwhile is sealed with the new key.
      const d = await api(cp, "/v1/lines", {
        method: "POST",
        json: {
          name: "lab-d",
          tier: "free",
          protocol: "openai-chat",
          baseUrl: lab.baseUrl("lab-a"),
          model: "lab-model",
          apiKey: KEYS["lab-a"],
        },
      });
      expect(d.status).toBe(201);
    } finally {
      await cp.stop();
    }

    // 2. rotate-secret re-seals what the old key sealed; the row written with the new key is left alone.
    const db = await testDb.open();
    try {
      const box = createSecretBox(NEW, OLD);
      const dry = await rotateLineKeys(db.db, box, { dryRun: true });
      expect(dry).toMatchObject({ withKey: 4, rotated: ["far-c", "lab-a", "lab-b"], current: 1, failed: [] });
      const withD = await sealedRows(db);
      expect(withD).toEqual(new Map([...before, ["lab-d", withD.get("lab-d")!]]));

      const report = await rotateLineKeys(db.db, box);
      expect(report).toEqual({ withKey: 4, rotated: ["far-c", "lab-a", "lab-b"], current: 1, failed: [] });
      expect(await rotateLineKeys(db.db, box)).toEqual({ withKey: 4, rotated: [], current: 4, failed: [] });
    } finally {
      await db.close();
    }
    const after = await sealedRows();
    const onlyNew = createSecretBox(NEW);
    const onlyOld = createSecretBox(OLD);
    for (const [name, sealed] of before) {
      expect(after.get(name), name).not.toBe(sealed);
      expect(onlyNew.decrypt(after.get(name)!), name).toBe(KEYS[name]);
      expect(() => onlyOld.decrypt(after.get(name)!), name).toThrow();
    }
    expect(onlyNew.decrypt(after.get("lab-d")!)).toBe(KEYS["lab-a"]);

    // 3. The previous key is removed: everything opens, and probes carry the right keys upstream.
    cp = await start(onlyNew);
    try {
      expect(await decryptedKeys(cp)).toMatchObject({ ...KEYS, "lab-d": KEYS["lab-a"], keyless: null });
      const lines = (await (await api(cp, "/v1/lines")).json()) as { lines: { id: string; name: string }[] };
      for (const name of ["lab-a", "lab-b"]) {
        const id = lines.lines.find((l) => l.name === name)!.id;
        const probe = (await (await api(cp, `/v1/lines/${id}/probe`, { method: "POST" })).json()) as { results: { status: number }[] };
        expect(
          probe.results.map((r) => r.status),
          name,
        ).toEqual([200]);
      }
    } finally {
      await cp.stop();
    }
  });

  it("never overwrites a key changed through the API meanwhile, and reports keys no key opens", async () => {
    const db = await testDb.open();
    try {
      const rows = await sealedRows(db);
      const id = (await queryRows<{ id: string }>(db, "select id from lines where name = 'far-c'"))[0]!.id;
      // A stale read loses: the swap only happens while the row still holds what was read.
      expect(await replaceLineApiKeyEnc(db.db, id, "v1:stale:stale:stale", createSecretBox(NEW).encrypt("sk-lost-update"))).toBe(false);
      expect((await sealedRows(db)).get("far-c")).toBe(rows.get("far-c"));

      // A row sealed with a key that is neither current nor previous is reported and left as it is.
      const foreign = createSecretBox(hexKey("0c")).encrypt("sk-foreign-key");
      expect(await replaceLineApiKeyEnc(db.db, id, rows.get("far-c")!, foreign)).toBe(true);
      const report = await rotateLineKeys(db.db, createSecretBox(NEW, OLD));
      expect(report.failed.map((f) => f.line)).toEqual(["far-c"]);
      expect(report.failed[0]!.error).not.toContain("sk-foreign-key");
      expect((await sealedRows(db)).get("far-c")).toBe(foreign);
      // Put it back for the next test.
      expect(await replaceLineApiKeyEnc(db.db, id, foreign, rows.get("far-c")!)).toBe(true);
    } finally {
      await db.close();
    }
  });

  it("re-seals webhook signing secrets the same way (issue 26)", async () => {
    const db = await testDb.open();
    const secret = "whsec-rot-dddddddddddd";
    try {
      const row = await insertWebhook(
        db.db,
        {
          name: "oncall",
          url: "http://127.0.0.1:9/hook",
          events: ["state_change"],
          routes: [],
          format: "json",
          secretEnc: createSecretBox(OLD).encrypt(secret),
        },
        new Date(),
      );
      const box = createSecretBox(NEW, OLD);
      expect(await rotateWebhookSecrets(db.db, box, { dryRun: true })).toEqual({
        withSecret: 1,
        rotated: ["oncall"],
        current: 0,
        failed: [],
      });
      expect(await rotateWebhookSecrets(db.db, box)).toEqual({ withSecret: 1, rotated: ["oncall"], current: 0, failed: [] });
      expect(await rotateWebhookSecrets(db.db, box)).toEqual({ withSecret: 1, rotated: [], current: 1, failed: [] });
      const [sealed] = await queryRows<{ secret_enc: string }>(db, `select secret_enc from webhooks where id = '${row.id}'`);
      expect(createSecretBox(NEW).decrypt(sealed?.secret_enc ?? "")).toBe(secret);
      expect(() => createSecretBox(OLD).decrypt(sealed?.secret_enc ?? "")).toThrow();
      expect(JSON.stringify(await rotateWebhookSecrets(db.db, createSecretBox(hexKey("0f"))))).not.toContain(secret);
    } finally {
      await db.close();
    }
  });

  it("runs as `npm run rotate-secret` against the configured database", async () => {
    const env = {
      ...process.env,
      LINEWATCH_SECRET_KEY: hexKey("0d"),
      LINEWATCH_SECRET_KEY_PREVIOUS: NEW,
      ...(testDb.url ? { DATABASE_URL: testDb.url } : { LINEWATCH_DATA_DIR: testDb.dataDir }),
    };
    const done = await run("npm", ["run", "--silent", "rotate-secret"], { env, cwd: process.cwd(), timeout: 120_000 });
    expect(done.stdout).toContain("4 line key(s): re-encrypted 4, 0 already on the current key, 0 unreadable");
    expect(done.stdout).toContain("1 webhook secret(s): re-encrypted 1, 0 already on the current key, 0 unreadable");
    expect(done.stdout).not.toContain("whsec-rot-");
    expect(done.stdout).not.toMatch(/sk-rot-/);
    const box = createSecretBox(hexKey("0d"));
    for (const [name, sealed] of await sealedRows()) expect(box.decrypt(sealed), name).toBe(KEYS[name] ?? KEYS["lab-a"]);

    // Without the previous key the old rows cannot be opened: the command says so and fails.
    const { LINEWATCH_SECRET_KEY_PREVIOUS: _p, ...noPrevious } = env;
    const failed = await run("npm", ["run", "--silent", "rotate-secret"], {
      env: { ...noPrevious, LINEWATCH_SECRET_KEY: hexKey("0e") },
      cwd: process.cwd(),
      timeout: 120_000,
    }).then(
      () => null,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toContain("UNREADABLE: lab-a");
  }, 300_000);
});
