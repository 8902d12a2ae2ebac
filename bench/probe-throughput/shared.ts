// Helpers shared by the probe-throughput processes: the shipped samples without a database,
// line names, CPU readings of this process and of other processes (/proc), and the message a
// child prints when it is done.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SampleCreateSchema } from "@linewatch/contract";
import type { Sample } from "@linewatch/core";
import { parse } from "yaml";
import { shippedProbesDir } from "../../apps/control-plane/src/shipped-samples";

/** What every probing child is told: where the lab is, how many lines, the pace and the windows. */
export interface ProbingOptions {
  labUrl: string;
  lines: number;
  intervalSec: number;
  warmupSec: number;
  seconds: number;
  maxInFlight: number;
}

export const lineName = (i: number) => `l${String(i).padStart(4, "0")}`;

/** The shipped openai-chat samples as the prober sees them (ids made up: no database here). */
export function shippedSamples(): Sample[] {
  const dir = join(shippedProbesDir, "openai-chat");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((f, i) => {
      const s = SampleCreateSchema.parse(parse(readFileSync(join(dir, f), "utf8")));
      return { id: `sample-${i}`, ...s, timeoutMs: s.timeoutMs ?? null, createdAt: new Date(0).toISOString() } as Sample;
    });
}

/** CPU time (ms, user + system) this process has used since `since`. */
export function cpuMsSince(since: NodeJS.CpuUsage): { userMs: number; systemMs: number; totalMs: number } {
  const d = process.cpuUsage(since);
  return { userMs: d.user / 1000, systemMs: d.system / 1000, totalMs: (d.user + d.system) / 1000 };
}

const CLK_TCK = 100; // Linux USER_HZ; /proc/<pid>/stat counts in these ticks

/** CPU time (ms) a process has used so far, from /proc; null when it is gone. */
export function procCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(rest[11]);
    const stime = Number(rest[12]);
    return ((utime + stime) * 1000) / CLK_TCK;
  } catch {
    return null;
  }
}

/** A child's last line on stdout: `RESULT <json>`. */
export function printResult(value: unknown): void {
  process.stdout.write(`RESULT ${JSON.stringify(value)}\n`);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Run a child's main: exit 0 when it ends, 1 with its error on stderr when it throws. */
export function runChild(name: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
