import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControlPlane, type TestControlPlane } from "../../helpers/control-plane";
import type { CliRun } from "./run-cli";

// The real `linewatch` binary (node apps/cli/bin/linewatch.mjs, through the repo's tsx), as a child
// process from a directory outside the repository: what cli.test.ts runs in process is the same
// code, this checks the wrapper around it (tsx from anywhere, argv, exit codes, stdout and stderr).

const BIN = fileURLToPath(new URL("../../../apps/cli/bin/linewatch.mjs", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "lw-cli-bin-"));
/** A node + tsx start per run, on a shared 2-core machine. */
const SLOW = 120_000;

function bin(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("LINEWATCH_")) base[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: work, env: { ...base, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane();
}, 60_000);
afterAll(async () => {
  await cp?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe("the linewatch binary", () => {
  it(
    "exits 2 with the usage on stderr when given nothing, 0 with its version",
    async () => {
      const none = await bin([]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain("usage: linewatch COMMAND");
      const version = await bin(["--version"]);
      expect(version.code).toBe(0);
      expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    },
    SLOW,
  );

  it(
    "exits 3 with the error envelope on stderr when the control plane cannot be reached",
    async () => {
      const r = await bin(["health", "--json", "--url", "http://127.0.0.1:1"]);
      expect(r.code).toBe(3);
      expect(JSON.parse(r.stderr).error.code).toBe("unreachable");
    },
    SLOW,
  );

  it(
    "drives a control plane named by LINEWATCH_URL, exit 1 when the API refuses",
    async () => {
      const created = await bin(["routes", "add", "chat"], { LINEWATCH_URL: cp.url });
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toContain("created route chat");
      const list = await bin(["routes", "list", "--json"], { LINEWATCH_URL: cp.url });
      expect(JSON.parse(list.stdout).routes.map((r: { name: string }) => r.name)).toEqual(["chat"]);
      const again = await bin(["routes", "add", "chat"], { LINEWATCH_URL: cp.url });
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("already exists");
    },
    SLOW,
  );

  it(
    "serve: starts a control plane from its options (startControlPlane), answers, and stops on SIGTERM with exit 0",
    async () => {
      const dataDir = join(work, "serve-data");
      // Its own embedded database, whatever the run's: never the PostgreSQL database DATABASE_URL names.
      const { DATABASE_URL: _shared, ...env } = process.env;
      const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir], {
        cwd: work,
        env: {
          ...Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith("LINEWATCH_"))),
          LOG_LEVEL: "warn",
          LINEWATCH_SCHEDULER: "false",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => {
          stdout += d.toString();
          const found = /linewatch control plane: (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
          if (found?.[1]) resolve(found[1]);
        });
        void exited.then((code) => reject(new Error(`serve exited with ${code} before it served: ${stderr}`)));
      });
      try {
        expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: "ok" });
        expect(stdout).toContain(`embedded PGlite in ${dataDir}`);
        // Its own data directory, made owner-only: the options reached the configuration, not the environment.
        expect(statSync(dataDir).mode & 0o077).toBe(0);
      } finally {
        child.kill("SIGTERM");
      }
      expect(await exited, stderr).toBe(0);
    },
    SLOW,
  );

  it(
    "serve: a bad option is said in a line naming the setting, exit 1, nothing started",
    async () => {
      const r = await bin(["serve", "--port", "99999"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("PORT");
      expect(r.stdout).not.toContain("linewatch control plane:");
    },
    SLOW,
  );
});
