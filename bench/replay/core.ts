// Core's PolicyReplay alone (no database): the bench fleet's results made in memory, in the order
// the database gives them, pushed through the replay. Where the replay's own time goes; run it with
// --cpu-prof to see which functions. The figure is results per second of core, nothing else.
//
//   npx tsx bench/replay/core.ts [--hours 1] [--lines 1000]

import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { DEFAULT_HEALTH_POLICY, PolicyReplay, type ReplayLine, type ReplayResult } from "@linewatch/core";
import { benchArgs } from "../args";

const args = benchArgs(import.meta.url, {
  hours: { type: "string", default: "1" },
  lines: { type: "string", default: "1000" },
  failCount: { type: "string", default: "3" },
});
const HOURS = Number(args.hours);
const LINES = Number(args.lines);
const SAMPLES = 4;
const INTERVAL_S = 45;
const ROUTES = 10;
const T0 = Date.UTC(2026, 11, 1, 0, 0, 0);

const hex = (n: number, w: number) => n.toString(16).padStart(w, "0");
// One string per line and sample, as the COPY reader interns them.
const lineIds = Array.from({ length: LINES }, (_, ln) => `00000000-0000-4000-8000-${hex(ln, 12)}`);
const sampleIds = Array.from({ length: 4 }, (_, sn) => `11111111-0000-4000-8000-${hex(sn, 12)}`);
const lineId = (ln: number) => lineIds[ln] as string;
const sampleId = (sn: number) => sampleIds[sn] as string;
const lines: ReplayLine[] = Array.from({ length: LINES }, (_, ln) => ({
  id: lineId(ln),
  name: `bench-${String(ln).padStart(4, "0")}`,
  tier: ln % 50 < 2 ? "free" : "paid",
  adminState: "active",
  maxShare: null,
  routes: [{ route: `r${ln % ROUTES}`, weight: 100 }],
}));
const routes = Array.from({ length: ROUTES }, (_, r) => ({ name: `r${r}`, freeShareCap: 0.2, onAllDown: "fail-open" as const }));
const policy = { ...DEFAULT_HEALTH_POLICY, failCount: Number(args.failCount) };

/** One slot k of every line and sample, as the bench's SQL makes them, sorted by (startedAt, id). */
let seq = 0;
function slot(k: number): ReplayResult[] {
  const out: ReplayResult[] = [];
  for (let ln = 0; ln < LINES; ln++)
    for (let sn = 0; sn < SAMPLES; sn++) {
      const bad = ln % 20 === 0 && k % 160 >= 40 && k % 160 <= 53;
      const stray = ln % 7 === 0 && (k * 31 + ln + sn) % 8 === 0;
      out.push({
        id: hex(seq++, 32),
        lineId: lineId(ln),
        sampleId: sampleId(sn),
        startedAt: T0 + Math.floor((k * INTERVAL_S + (ln % 45) + sn * 11.25) * 1000),
        latencyMs: bad ? 10_000 : 700 + ((ln * 7 + k) % 900),
        score: bad ? 0 : stray ? 55 : 92,
        passed: !(bad || stray),
        hardFailure: bad,
        components: null,
        failedCheck: false,
        contentLength: 300,
      });
    }
  return out.sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1));
}

const slots = (HOURS * 3600) / INTERVAL_S;
// Made before the clock starts: a slot overlaps the next by up to 78 s, so merge two at a time.
const all: ReplayResult[] = [];
for (let k = 0; k < slots; k++) all.push(...slot(k));
all.sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1));

const t0 = performance.now();
const cpu0 = process.cpuUsage();
const replay = new PolicyReplay({
  from: T0,
  to: T0 + HOURS * 3_600_000,
  lines,
  routes,
  sampleWeights: new Map(),
  policies: new Map(lines.map((l) => [l.id, policy])),
  scoring: null,
});
for (const r of all) replay.push(r);
const run = replay.finish();
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
const cooldowns = [...run.summary.lines.values()].reduce((a, l) => a + l.cooldowns.length, 0);
// A digest of everything the run gives, to see that a faster replay gives the same.
const digest = createHash("sha256")
  .update(JSON.stringify(run, (_k, v) => (v instanceof Map ? [...v] : v)))
  .digest("hex")
  .slice(0, 16);
process.stdout.write(
  `core PolicyReplay: ${run.results} results in ${(ms / 1000).toFixed(2)} s = ${Math.round(run.results / (ms / 1000))} results/s (CPU time ${(cpuMs / 1000).toFixed(2)} s = ${Math.round(run.results / (cpuMs / 1000))} results/s); cooldowns ${cooldowns}, episodes ${run.badEpisodes.length}; digest ${digest}\n`,
);
