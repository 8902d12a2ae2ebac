// The lab of the benchmark, in its own process so its CPU is not the control plane's:
// one server on 127.0.0.1 hosting `lines` virtual lines (l0000, l0001, …), all in mode ok.
//   argv: JSON {lines, latencyMs, jitterMs}
//   stdout: `READY <url>`; then, for each `stats` line on stdin, `STATS <json>` (requests, statuses).
import { createInterface } from "node:readline";
import { startLab } from "@linewatch/lab";
import { lineName } from "./shared";

const opts = JSON.parse(process.argv[2] ?? "{}") as { lines: number; latencyMs: number; jitterMs: number };
const lab = await startLab({
  lines: Array.from({ length: opts.lines }, (_, i) => ({
    name: lineName(i),
    baseLatencyMs: opts.latencyMs,
    latencyJitterMs: opts.jitterMs,
  })),
});
process.stdout.write(`READY ${lab.url}\n`);

const rl = createInterface({ input: process.stdin });
rl.on("line", (cmd) => {
  if (cmd.trim() !== "stats") return;
  let requests = 0;
  const byStatus: Record<string, number> = {};
  for (const name of lab.lineNames()) {
    const s = lab.stats(name);
    requests += s.requests;
    for (const [k, v] of Object.entries(s.byStatus)) byStatus[k] = (byStatus[k] ?? 0) + v;
  }
  process.stdout.write(`STATS ${JSON.stringify({ requests, byStatus })}\n`);
});
// The orchestrator closes stdin when it is done (or dies): stop then.
rl.on("close", () => void lab.close().then(() => process.exit(0)));
