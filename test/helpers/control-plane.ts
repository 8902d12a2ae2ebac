import { randomBytes } from "node:crypto";
import type { Database } from "@linewatch/db";
import { loadConfig } from "../../apps/control-plane/src/config";
import type { AppDeps, Clock } from "../../apps/control-plane/src/deps";
import { type Logger, silentLogger } from "../../apps/control-plane/src/logger";
import { createSecretBox } from "../../apps/control-plane/src/secrets";
import { type ControlPlane, serveControlPlane } from "../../apps/control-plane/src/server";
import { createTestDatabase, type TestDatabase } from "./test-db";

export interface TestControlPlane extends ControlPlane {
  database: Database;
  testDb: TestDatabase;
  /** Stop the process-like unit and start it again on the same database. */
  restart(): Promise<TestControlPlane>;
  stop(): Promise<void>;
  request(path: string, init?: RequestInit & { json?: unknown; token?: string }): Promise<Response>;
}

export interface TestControlPlaneOptions {
  env?: Record<string, string>;
  clock?: Clock;
  logger?: Logger;
  testDb?: TestDatabase;
  secretKey?: string;
  /** Seeds the prober's jitter (a test that records a history). */
  rng?: () => number;
  /** The resolver under the prober's upstream guard (a zone the test controls). */
  dnsLookup?: AppDeps["dnsLookup"];
}

/** A real control plane on 127.0.0.1:0 over a fresh real database (PGlite or PostgreSQL). */
export async function startTestControlPlane(opts: TestControlPlaneOptions = {}): Promise<TestControlPlane> {
  const testDb = opts.testDb ?? (await createTestDatabase());
  const secretKey = opts.secretKey ?? randomBytes(32).toString("hex");
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    LINEWATCH_SCHEDULER: "false",
    // Tests drive time through the clock: a batch that lingers for more writes only waits in real time.
    LINEWATCH_BATCH_LINGER_MS: "0",
    // The golden samples only, as most tests count them; the tests of what a relay can fake turn the
    // shipped fingerprint bank on (test/apps/control-plane/relay-fakes.test.ts).
    LINEWATCH_SHIPPED_FINGERPRINTS: "false",
    ...opts.env,
  });
  const database = await testDb.open();
  const cp = await serveControlPlane(
    {
      config,
      database,
      clock: opts.clock ?? { now: () => Date.now() },
      logger: opts.logger ?? silentLogger,
      secrets: createSecretBox(secretKey),
      ...(opts.dnsLookup ? { dnsLookup: opts.dnsLookup } : {}),
    },
    opts.rng ? { rng: opts.rng } : {},
  );
  const stop = async () => {
    await cp.close();
    await database.close();
  };
  return {
    ...cp,
    database,
    testDb,
    stop,
    restart: async () => {
      await stop();
      return startTestControlPlane({ ...opts, testDb, secretKey });
    },
    request: (path, init = {}) => {
      const { json, token, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (json !== undefined) headers.set("content-type", "application/json");
      if (token) headers.set("authorization", `Bearer ${token}`);
      return fetch(`${cp.url}${path}`, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
    },
  };
}
