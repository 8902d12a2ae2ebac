import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Lab, startLab } from "@linewatch/lab";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canRunPrivatePostgres } from "../helpers/private-postgres";
import { type ControlPlaneProcess, startControlPlaneProcess } from "../helpers/process";
import { createLines, createRoute, eventually, faultDatabase, pause } from "./support";

// Issue 27 item 2: after kill -9 and a restart, a line whose probe the dead process had claimed is
// probed again within 2 intervals + its timeout (docs/tables.md#probe-frequency), on PostgreSQL and
// on the embedded database, with and without LINEWATCH_REPLICA_ID. The line hangs (every probe runs
// into its timeout), so it is in cooldown and a probe of it is nearly always in flight.
const INTERVAL_MS = 4_000;
const TIMEOUT_MS = 3_000;
const BOUND_MS = 2 * INTERVAL_MS + TIMEOUT_MS;

const postgres = !!process.env.DATABASE_URL || canRunPrivatePostgres();
const CASES = [
  { name: "PostgreSQL, LINEWATCH_REPLICA_ID set", embedded: false, replicaId: "restart-a", run: postgres },
  { name: "PostgreSQL, no LINEWATCH_REPLICA_ID", embedded: false, replicaId: null, run: postgres },
  // The PostgreSQL run (DATABASE_URL set) leaves the embedded cases to the PGlite run.
  { name: "PGlite, LINEWATCH_REPLICA_ID set", embedded: true, replicaId: "restart-b", run: !process.env.DATABASE_URL },
  { name: "PGlite, no LINEWATCH_REPLICA_ID", embedded: true, replicaId: null, run: !process.env.DATABASE_URL },
] as const;

let lab: Lab;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  lab = await startLab({ lines: CASES.map((_, k) => ({ name: `hung-${k}` })) });
  for (const [k] of CASES.entries()) lab.setMode(`hung-${k}`, "hang");
});

afterAll(async () => {
  for (const clean of cleanups.reverse()) await clean();
  await lab?.close();
});

describe("kill -9 during a probe of a line in cooldown, then a restart", () => {
  for (const [k, c] of CASES.entries()) {
    it.skipIf(!c.run)(
      `${c.name}: the line is probed again within 2 intervals + its timeout`,
      async () => {
        const line = `hung-${k}`;
        const database = c.embedded ? null : await faultDatabase();
        const dataDir = mkdtempSync(join(tmpdir(), "lw-restart-"));
        cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
        if (database) cleanups.push(() => database.dispose());
        const opts = {
          databaseUrl: database?.url ?? null,
          replicaId: c.replicaId,
          dataDir,
          secretKey: "b".repeat(64),
          readyTimeoutMs: 180_000,
          env: { LINEWATCH_SHIPPED_SAMPLES: "false" },
        };
        let cp: ControlPlaneProcess = await startControlPlaneProcess(opts);
        cleanups.push(() => cp.stop());
        await createRoute(cp, "chat");
        const sample = await cp.request("/v1/samples", {
          method: "POST",
          json: {
            name: "hello",
            protocol: "openai-chat",
            request: { messages: [{ role: "user", content: "Say hello." }], max_tokens: 16 },
            expect: {},
          },
        });
        expect(sample.status, await sample.clone().text()).toBe(201);
        const ids = await createLines(cp, "chat", [
          { name: line, baseUrl: lab.baseUrl(line), probeIntervalSec: INTERVAL_MS / 1000, timeoutMs: TIMEOUT_MS },
        ]);
        const state = async () => ((await (await cp.request(`/v1/lines/${ids.get(line)}/health`)).json()) as { state: string }).state;
        await eventually(async () => (await state()) === "cooldown", 90_000);

        // Kill just after a probe reached the line: it hangs there, claimed by the process that dies.
        const seen = lab.stats(line).requests;
        await eventually(async () => lab.stats(line).requests > seen, 20_000, 10);
        await pause(200);
        await cp.kill9();
        const killedAt = Date.now();
        const atKill = lab.stats(line).requests;

        cp = await startControlPlaneProcess(opts);
        const readyAt = Date.now();
        await eventually(async () => lab.stats(line).requests > atKill, BOUND_MS + 10_000, 10);
        const probedAt = Date.now();
        const figures = { sinceReadyMs: probedAt - readyAt, sinceKillMs: probedAt - killedAt, startMs: readyAt - killedAt };
        if (process.env.LINEWATCH_FIGURES) console.log(`${c.name}: ${JSON.stringify(figures)}`);
        expect(figures.sinceReadyMs, JSON.stringify(figures)).toBeLessThanOrEqual(BOUND_MS);
        expect(await state()).toBe("cooldown");
        expect(cp.stderr()).toBe("");
      },
      300_000,
    );
  }
});
