import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import type { FromPart, PartSetup } from "../../../apps/control-plane/src/replay/replay-worker";

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));
const out = join(repoRoot, "apps/control-plane/dist", `test-bundle-${randomBytes(4).toString("hex")}.mjs`);
const worker = out.replace(/\.mjs$/, ".replay-worker.mjs");

afterAll(() => {
  for (const f of [out, `${out}.map`, worker, `${worker}.map`]) rmSync(f, { force: true });
});

// `npm start` runs the bundle: its worker threads must be bundled next to it and named by it, since a
// bundled module's import.meta.url points at its source file.
describe("the control plane's bundle (npm start)", () => {
  it("carries the replay worker, which runs a part of a replay from the bundle", async () => {
    await promisify(execFile)(process.execPath, ["apps/control-plane/build.mjs", "apps/control-plane/src/main.ts", out], {
      cwd: repoRoot,
    });
    const { readFile } = await import("node:fs/promises");
    const head = (await readFile(out, "utf8")).slice(0, 400);
    expect(head).toContain(`new URL("./${worker.split("/").at(-1)}", import.meta.url)`);

    const line = {
      id: "00000000-0000-4000-8000-000000000001",
      name: "a",
      tier: "paid",
      adminState: "active",
      maxShare: null,
      routes: [{ route: "r", weight: 100 }],
    } as const;
    const { DEFAULT_HEALTH_POLICY } = await import("@linewatch/core");
    const setup: PartSetup = {
      from: 0,
      to: 3_600_000,
      part: { lines: [line], routes: [{ name: "r", freeShareCap: 0.2, onAllDown: "fail-open" }] },
      sampleWeights: new Map(),
      policies: new Map([[line.id, DEFAULT_HEALTH_POLICY]]),
      scoring: null,
      rescoring: false,
      timelineLine: null,
    };
    const w = new Worker(worker, { workerData: setup });
    const answers: FromPart[] = [];
    const done = new Promise<void>((resolve, reject) => {
      w.on("message", (m: FromPart) => {
        answers.push(m);
        if (m.kind !== "ack") resolve();
      });
      w.on("error", reject);
    });
    const result = (i: number, passed: boolean) => ({
      id: `r${i}`,
      lineId: line.id,
      sampleId: "s",
      startedAt: i * 60_000,
      latencyMs: 500,
      score: passed ? 92 : 0,
      passed,
      hardFailure: !passed,
      components: null,
      failedCheck: false,
      contentLength: 300,
    });
    w.postMessage({ kind: "rows", rows: Array.from({ length: 30 }, (_, i) => result(i, i < 10 || i > 20)) });
    w.postMessage({ kind: "end" });
    await done;
    await w.terminate();
    const last = answers.at(-1);
    expect(answers[0]?.kind).toBe("ack");
    expect(last?.kind).toBe("done");
    if (last?.kind !== "done") return;
    expect(last.run.results).toBe(30);
    // Eleven hard failures in a row: the line was cooled down.
    expect(last.run.summary.lines.get(line.id)?.cooldowns.length).toBeGreaterThan(0);
  }, 60_000);
});
