// A lab for manual use: npx tsx packages/lab/src/main.ts --lines 4 --port 9100
import { parseArgs } from "node:util";
import { isLabMode, LAB_MODES, type LabMode, startLab } from "./index";

const { values } = parseArgs({
  options: {
    lines: { type: "string", default: "4" },
    port: { type: "string", default: "9100" },
    host: { type: "string", default: "127.0.0.1" },
    prefix: { type: "string", default: "line-" },
    seed: { type: "string" },
    mode: { type: "string", default: "ok" },
    "api-key": { type: "string" },
    "latency-ms": { type: "string", default: "0" },
    "jitter-ms": { type: "string", default: "0" },
    help: { type: "boolean", default: false },
  },
});

if (values.help) {
  console.log(`usage: main.ts [--lines N] [--port P] [--host H] [--prefix line-] [--seed S]
               [--mode ${LAB_MODES.join("|")}] [--api-key K] [--latency-ms N] [--jitter-ms N]`);
  process.exit(0);
}

const count = integer("lines", values.lines);
const mode: LabMode = isLabMode(values.mode) ? values.mode : fail(`--mode must be one of ${LAB_MODES.join(", ")}`);
const width = String(count).length;
const lab = await startLab({
  host: values.host,
  port: integer("port", values.port),
  lines: Array.from({ length: count }, (_, i) => ({
    name: `${values.prefix}${String(i + 1).padStart(width, "0")}`,
    seed: values.seed === undefined ? undefined : `${values.seed}:${i + 1}`,
    apiKey: values["api-key"],
    mode,
    baseLatencyMs: integer("latency-ms", values["latency-ms"]),
    latencyJitterMs: integer("jitter-ms", values["jitter-ms"]),
  })),
});

console.log(`linewatch lab on ${lab.url} (${count} lines, mode ${mode})`);
for (const name of lab.lineNames()) console.log(`${name}\t${lab.baseUrl(name)}`);
console.log(`switch a mode: curl -X POST ${lab.url}/__lab/lines/<name>/mode -d '{"mode":"truncate","fraction":0.3}'`);
console.log(`read counters: curl ${lab.url}/__lab/lines/<name>`);

const stop = () => {
  lab.close().then(() => process.exit(0));
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);

function integer(flag: string, text: string | undefined): number {
  const n = Number(text);
  return Number.isInteger(n) && n >= 0 ? n : fail(`--${flag} must be a whole number ≥ 0`);
}

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}
