// Detection benchmark: time to weight 0 and the share of requests a bad line served, for five
// silent faults, linewatch against a plain 2-failures rule and a status-code-only health check, all
// at the same steady-state budget (4 probes per line per 45 s). Prints figures; asserts nothing.
//   npx tsx bench/detection/run.ts [--runs 50] [--seed 1] [--kinds truncate,stale] [--verbose]
import { DEFAULT_HEALTH_POLICY, type HealthPolicy } from "../../packages/core/src/index";
import { Fleet } from "../../test/sim/fleet";
import { logNormal, mulberry32, seedFrom } from "../../test/sim/rng";
import { BASE_LATENCY_MS, healthy, lab, SHIPPED, SIM_SAMPLES } from "../../test/sim/upstreams";
import { benchArgs } from "../args";
import { FAULT_KINDS, type FaultKind, type FaultPlan, faultyLine, planFault } from "./faults";
import { BAD, route, weightOf } from "./route";
import { ThresholdCheck } from "./threshold";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const INTERVAL_MS = 45_000;
const T0 = Date.UTC(2026, 10, 29);

const args = benchArgs(import.meta.url, {
  runs: { type: "string", default: "50" },
  seed: { type: "string", default: "1" },
  kinds: { type: "string", default: FAULT_KINDS.join(",") },
  verbose: { type: "boolean", default: false },
});
const RUNS = Number(args.runs);
const SEED = Number(args.seed);
const VERBOSE = args.verbose;
const KINDS = args.kinds.split(",") as FaultKind[];

type Timeline = Array<{ at: number; weight: number }>;

interface Outcome {
  /** Time from badStart to the first table with weight 0 at or after the onset; null: not within the fault. */
  toZeroMs: number | null;
  /** ∫ weight/10000 dt over the bad span, ms: × 1/DAY = share of the day's requests served badly. */
  servedBadMs: number;
  extraProbes: number;
  probes: number;
}

function measure(timeline: Timeline, plan: FaultPlan): Pick<Outcome, "toZeroMs" | "servedBadMs"> {
  let toZeroMs: number | null = null;
  let servedBadMs = 0;
  for (let i = 0; i < timeline.length; i++) {
    const { at, weight } = timeline[i]!;
    const next = timeline[i + 1]?.at ?? Number.POSITIVE_INFINITY;
    // Weight 0 already at the onset counts from the onset.
    if (toZeroMs === null && weight === 0 && next > plan.onset && at < plan.end) {
      toZeroMs = Math.max(at, plan.onset) - plan.badStart;
    }
    const a = Math.max(at, plan.badStart);
    const b = Math.min(next, plan.end);
    if (b > a) servedBadMs += (weight / 10_000) * (b - a);
  }
  return { toZeroMs, servedBadMs };
}

function runLinewatch(plan: FaultPlan, from: number, to: number, seed: number, policy: HealthPolicy): Outcome {
  const f = new Fleet({
    route,
    start: from,
    seed,
    policy,
    samples: SIM_SAMPLES,
    lines: [
      { id: "paid-a", tier: "paid", baseWeight: 100, respond: healthy(seed * 3 + 1) },
      { id: "paid-b", tier: "paid", baseWeight: 100, respond: healthy(seed * 3 + 2) },
      { id: BAD, tier: "free", baseWeight: 100, respond: faultyLine(plan, BAD, seed) },
    ],
  });
  f.runUntil(to);
  const timeline = f.tables.map((t) => ({ at: t.generatedAt, weight: t.lines.find((l) => l.lineId === BAD)?.weight ?? 0 }));
  const p = f.probes(BAD);
  const probes = p.scheduled + p.reprobe + p.fast;
  // Extra: beyond the steady schedule (4 samples per 45 s) over the simulated span.
  const steady = ((to - from) / INTERVAL_MS) * SIM_SAMPLES.length;
  return { ...measure(timeline, plan), extraProbes: Math.max(0, probes - steady), probes };
}

function runThreshold(plan: FaultPlan, from: number, to: number, seed: number, verdict: "status" | "content"): Outcome {
  const rng = mulberry32(seed ^ 0x9e3779b9);
  const c = new ThresholdCheck({
    respond: faultyLine(plan, BAD, seed),
    samples: SIM_SAMPLES,
    start: from,
    offsetMs: Math.floor(rng() * INTERVAL_MS),
    intervalMs: INTERVAL_MS,
    verdict,
  });
  c.runUntil(to);
  const timeline = c.factors.map((x) => ({ at: x.at, weight: weightOf(x.factor) }));
  return { ...measure(timeline, plan), extraProbes: 0, probes: c.probes };
}

const CHECKERS = ["linewatch", "linewatch, no re-probe", "plain 2×45 s", "status-only"] as const;
type Checker = (typeof CHECKERS)[number];
const NO_REPROBE: HealthPolicy = { ...DEFAULT_HEALTH_POLICY, reprobeDelayMs: null };

function runOnce(kind: FaultKind, run: number): Record<Checker, Outcome> & { plan: FaultPlan } {
  const rng = mulberry32(seedFrom(SEED, FAULT_KINDS.indexOf(kind), run));
  const onset = T0 + HOUR + Math.floor(rng() * 19 * HOUR);
  const plan = planFault(kind, onset, onset + 30 * MIN + Math.floor(rng() * 90 * MIN), SHIPPED);
  // 25 min before: the line's baselines (20 probes per sample) are warm when the fault starts.
  const from = onset - 25 * MIN;
  const to = plan.end + 25 * MIN;
  const seed = Math.floor(rng() * 2 ** 31);
  return {
    plan,
    linewatch: runLinewatch(plan, from, to, seed, DEFAULT_HEALTH_POLICY),
    "linewatch, no re-probe": runLinewatch(plan, from, to, seed, NO_REPROBE),
    "plain 2×45 s": runThreshold(plan, from, to, seed, "content"),
    "status-only": runThreshold(plan, from, to, seed, "status"),
  };
}

const sec = (ms: number) => (ms / 1000).toFixed(1);
const pct = (x: number) => `${(x * 100).toFixed(4)}%`;
function quantiles(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return { min: s[0]!, median: mid, max: s[s.length - 1]! };
}
function detectionCell(outs: Outcome[], full = false): string {
  const hits = outs.flatMap((o) => (o.toZeroMs === null ? [] : [o.toZeroMs]));
  if (hits.length === 0) return `never (0/${outs.length})`;
  const q = quantiles(hits);
  const missed = outs.length - hits.length;
  const body = full ? `${sec(q.min)} / **${sec(q.median)}** / ${sec(q.max)}` : `${sec(q.median)} / ${sec(q.max)}`;
  return missed > 0 ? `${body} (missed ${missed}/${outs.length})` : body;
}

/** Per fault and sample, what core's scorer makes of the lab's answers: mean score and share failed. */
function faultEffects(): string[] {
  const out = [`| fault | ${SHIPPED.map((s) => s.name).join(" | ")} |`, `|---|${SHIPPED.map(() => "---").join("|")}|`];
  for (const kind of FAULT_KINDS) {
    const cells = SHIPPED.map(() => ({ score: 0, failed: 0, n: 0 }));
    for (let run = 0; run < 20; run++) {
      const onset = T0 + 30 * MIN;
      const plan = planFault(kind, onset, onset + DAY, SHIPPED);
      const respond = faultyLine(plan, BAD, seedFrom(SEED, run, 77));
      // Warm the baseline for 25 min, then probe in the fault (creep: once the latency component fails).
      let t = T0 + 5 * MIN;
      for (; t < onset; t += INTERVAL_MS) for (const s of SIM_SAMPLES) respond(s, t, "scheduled");
      for (t = plan.badStart; t < plan.badStart + 5 * MIN; t += INTERVAL_MS) {
        SIM_SAMPLES.forEach((s, i) => {
          const o = respond(s, t, "scheduled");
          const hard = o.hardFailure || o.latencyMs > s.timeoutMs;
          cells[i]!.score += hard ? 0 : o.score;
          cells[i]!.failed += hard || !o.passed ? 1 : 0;
          cells[i]!.n += 1;
        });
      }
    }
    out.push(
      `| ${kind} | ${cells.map((c) => `${(c.score / c.n).toFixed(0)} (${Math.round((100 * c.failed) / c.n)}% fail)`).join(" | ")} |`,
    );
  }
  return out;
}

/** A healthy lab line whose latency is noisier than the fault runs' (σ 0.35, and 2× on 2% of requests). */
function noisyLine(seed: number) {
  return lab({
    name: BAD,
    seed,
    latencyAt: (sample, _at, rng) => (BASE_LATENCY_MS[sample.name] ?? 1000) * logNormal(rng, 0.35) * (rng() < 0.02 ? 2 : 1),
  });
}

/** A day without a fault: what each checker spends, and how often it cuts a good line. */
function healthyDay(): string[] {
  const lines: string[] = [];
  const f = new Fleet({
    route,
    start: T0,
    seed: SEED,
    samples: SIM_SAMPLES,
    lines: [
      { id: "paid-a", tier: "paid", baseWeight: 100, respond: healthy(1) },
      { id: "paid-b", tier: "paid", baseWeight: 100, respond: healthy(2) },
      { id: BAD, tier: "free", baseWeight: 100, respond: noisyLine(SEED) },
    ],
  });
  f.runUntil(T0 + DAY);
  const p = f.probes(BAD);
  const count = (pred: (e: (typeof f.events)[number]) => boolean) => f.events.filter((e) => e.lineId === BAD && pred(e)).length;
  lines.push(
    `linewatch: ${p.scheduled} scheduled probes + ${p.reprobe} re-probes + ${p.fast} fast probes ` +
      `(${(((p.reprobe + p.fast) / p.scheduled) * 100).toFixed(2)}% extra); ${count((e) => e.effect.kind === "trend_alert")} trend alerts, ` +
      `${count((e) => e.effect.kind === "state_change" && e.effect.to === "cooldown")} cooldowns, ` +
      `${count((e) => e.effect.kind === "weight_change")} weight changes`,
  );
  for (const verdict of ["content", "status"] as const) {
    const c = new ThresholdCheck({ respond: noisyLine(SEED), samples: SIM_SAMPLES, start: T0, offsetMs: 0, verdict });
    c.runUntil(T0 + DAY);
    lines.push(`${verdict === "content" ? "plain 2×45 s" : "status-only"}: ${c.probes} probes, ${c.factors.length - 1} weight changes`);
  }
  return lines;
}

function main(): void {
  const started = performance.now();
  console.log(`detection benchmark: ${RUNS} runs per fault, seed ${SEED}, probe interval 45 s, 4 samples per line`);
  console.log(`route: paid-a, paid-b (paid), ${BAD} (free, the faulty one; 20% share while healthy), freeShareCap 0.2\n`);
  const rows: string[] = [];
  const shareRows: string[] = [];
  const budgetRows: string[] = [];
  for (const kind of KINDS) {
    const results = Array.from({ length: RUNS }, (_, i) => runOnce(kind, i));
    if (VERBOSE) {
      for (const [i, r] of results.entries()) {
        const cells = CHECKERS.map((c) => `${c}: ${r[c].toZeroMs === null ? "-" : sec(r[c].toZeroMs)}`);
        process.stderr.write(`  ${kind} run ${i} onset ${new Date(r.plan.onset).toISOString()} ${cells.join(", ")}\n`);
      }
    }
    const col = (c: Checker) => results.map((r) => r[c]);
    rows.push(
      `| ${kind} | ${detectionCell(col("linewatch"), true)} | ${detectionCell(col("linewatch, no re-probe"))} | ` +
        `${detectionCell(col("plain 2×45 s"))} | ${detectionCell(col("status-only"))} |`,
    );
    const served = (c: Checker) => col(c).reduce((a, o) => a + o.servedBadMs / DAY, 0) / RUNS;
    const lw = served("linewatch");
    const so = served("status-only");
    const ratio = lw > 0 ? `${(so / lw).toFixed(0)}×` : "∞";
    shareRows.push(`| ${kind} | ${pct(lw)} | ${pct(served("plain 2×45 s"))} | ${pct(so)} | ${ratio} |`);
    const extra = col("linewatch").reduce((a, o) => a + o.extraProbes, 0) / RUNS;
    const total = col("linewatch").reduce((a, o) => a + o.probes, 0) / RUNS;
    const spanH = results.reduce((a, r) => a + (r.plan.end - r.plan.onset + 50 * MIN) / HOUR, 0) / RUNS;
    budgetRows.push(
      `| ${kind} | ${total.toFixed(0)} | ${extra.toFixed(1)} | ${((extra / total) * 100).toFixed(2)}% | ${spanH.toFixed(1)} h |`,
    );
    process.stderr.write(`  ${kind} done (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  console.log("time from the line going bad to weight 0, seconds (linewatch: min / median / max; others: median / max)\n");
  console.log(`| fault | linewatch | linewatch, no re-probe | plain 2×45 s | status-only |`);
  console.log(`|---|---|---|---|---|`);
  for (const r of rows) console.log(r);
  console.log("\nshare of the day's user requests served by the bad line while bad (mean over runs)\n");
  console.log(`| fault | linewatch | plain 2×45 s | status-only | status-only ÷ linewatch |`);
  console.log(`|---|---|---|---|---|`);
  for (const r of shareRows) console.log(r);
  console.log("\nlinewatch probes of the faulty line per run (mean), and the extra ones (re-probes + fast probes)\n");
  console.log(`| fault | probes | extra | extra share | simulated span |`);
  console.log(`|---|---|---|---|---|`);
  for (const r of budgetRows) console.log(r);
  console.log("\nwhat core's scorer makes of each fault, per sample: mean score (share of probes failed), 5 min into the bad span\n");
  for (const l of faultEffects()) console.log(l);
  console.log("\na healthy day (no fault) of the same line with noisier latency (log-normal σ 0.35, 2× on 2% of requests):\n");
  for (const l of healthyDay()) console.log(`- ${l}`);
  console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

main();
