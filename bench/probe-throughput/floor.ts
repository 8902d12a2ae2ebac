// The floor: the same probes at the same rate with no scheduler and no database, in its own
// process. Every (line, sample) is sent once per interval at its own offset, what is due going out
// on a one-second tick as the scheduler's does, with the prober's own request building and sender
// (undici, one keep-alive agent, AbortController timeout).
//   mode "send":  build the request, send it, read the answer. The network floor.
//   mode "score": the same, then what the prober does in memory: parse the answer, hash it,
//                 compute the (line, sample) baseline from the last 20 results (kept here in
//                 memory) and score it. Network + scoring, without the database.
//   argv: JSON FloorOptions; stdout: `RESULT <json>` (FloorResult)
import { createHash, randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import {
  BASELINE_WINDOW,
  type BaselineEntry,
  computeBaseline,
  fillTemplate,
  getAdapter,
  sampleOffsetsMs,
  scoreProbe,
} from "@linewatch/core";
import { probeTimeoutMs } from "../../apps/control-plane/src/prober/run-probe";
import { createProbeAgent, sendProbe } from "../../apps/control-plane/src/prober/send-probe";
import { cpuMsSince, lineName, type ProbingOptions, printResult, runChild, shippedSamples, sleep } from "./shared";

export interface FloorOptions extends ProbingOptions {
  mode: "send" | "score";
}

export interface FloorResult {
  mode: string;
  lines: number;
  expectedPerSec: number;
  wallMs: number;
  cpuMs: number;
  sent: number;
  passed: number;
  elu: number;
}

const opts = JSON.parse(process.argv[2] ?? "{}") as FloorOptions;
const samples = shippedSamples();
const adapter = getAdapter("openai-chat");
const agent = createProbeAgent([]);
const intervalMs = opts.intervalSec * 1000;

interface Item {
  line: number;
  sample: number;
  at: number;
}
// Same spread as the scheduler: a random start per line, its samples evenly across the interval.
const start = Date.now();
const items: Item[] = [];
for (let l = 0; l < opts.lines; l++) {
  const offsets = sampleOffsetsMs(Math.floor(Math.random() * intervalMs), intervalMs, samples.length);
  for (const [s, o] of offsets.entries()) items.push({ line: l, sample: s, at: start + o });
}
items.sort((a, b) => a.at - b.at);
// Equal intervals: rescheduling an item at `at + interval` keeps the queue sorted when appended.
const queue = items;
let head = 0;

const history = new Map<string, BaselineEntry[]>();
let sent = 0;
let passed = 0;
let inFlight = 0;
const waiting: Item[] = [];

async function probe(item: Item): Promise<void> {
  const sample = samples[item.sample]!;
  const name = lineName(item.line);
  const nonce = `lw-${randomBytes(6).toString("hex")}`;
  const startedAt = Date.now();
  const request = adapter.buildProbe(
    { baseUrl: `${opts.labUrl}/lines/${name}/v1`, model: "lab-model", headers: {}, apiKey: null },
    fillTemplate(sample.request, { nonce, now: startedAt }),
  );
  const outcome = await sendProbe(agent, request, probeTimeoutMs({ timeoutMs: null }, sample), () => Date.now());
  sent++;
  if (opts.mode !== "score") return;
  const key = `${item.line}/${item.sample}`;
  const past = history.get(key) ?? [];
  let content: string | null = null;
  let json: unknown = null;
  let errorClass = outcome.errorClass;
  if (outcome.status !== null) {
    const parsed = adapter.parseResponse(outcome.status, outcome.bodyText);
    if (parsed.ok) ({ content, json } = parsed);
    else errorClass = parsed.errorClass;
  }
  const contentHash = content === null ? null : createHash("sha256").update(content).digest("hex").slice(0, 32);
  const scored = scoreProbe({
    expect: sample.expect,
    observation: { status: outcome.status, errorClass, latencyMs: outcome.latencyMs, content, json, contentHash, nonce },
    baseline: computeBaseline(past),
  });
  if (scored.passed) passed++;
  past.unshift({
    contentLength: scored.contentLength,
    latencyMs: outcome.latencyMs,
    passed: scored.passed,
    contentHash,
    hardFailure: scored.hardFailure,
  });
  if (past.length > BASELINE_WINDOW) past.length = BASELINE_WINDOW;
  history.set(key, past);
}

function launch(item: Item): void {
  inFlight++;
  void probe(item).finally(() => {
    inFlight--;
    const next = waiting.shift();
    if (next) launch(next);
  });
}

let stopped = false;
async function pace(): Promise<void> {
  while (!stopped) {
    const now = Date.now();
    while (head < queue.length && queue[head]!.at <= now) {
      const item = queue[head++]!;
      queue.push({ ...item, at: item.at + intervalMs });
      if (inFlight < opts.maxInFlight) launch(item);
      else waiting.push(item);
    }
    if (head > 100_000) {
      queue.splice(0, head);
      head = 0;
    }
    // The scheduler's own pace: what is due goes out once a second (its node-cron tick).
    await sleep(1000 - (Date.now() % 1000));
  }
}

async function main() {
  const pacing = pace();
  await sleep(opts.warmupSec * 1000);
  const cpu = process.cpuUsage();
  const elu = performance.eventLoopUtilization();
  const sent0 = sent;
  const passed0 = passed;
  const t = performance.now();
  await sleep(opts.seconds * 1000);
  const c = cpuMsSince(cpu);
  const result: FloorResult = {
    mode: opts.mode,
    lines: opts.lines,
    expectedPerSec: (opts.lines * samples.length) / opts.intervalSec,
    wallMs: performance.now() - t,
    cpuMs: c.totalMs,
    sent: sent - sent0,
    passed: passed - passed0,
    elu: performance.eventLoopUtilization(elu).utilization,
  };
  stopped = true;
  await pacing;
  await agent.close();
  printResult(result);
}

runChild("floor", main);
