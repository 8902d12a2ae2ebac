import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
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
});
