// Judgment under real noise (bench/README.md, "Judgment under real noise"): false cooldowns of
// noisy working lines per line-day, flapping of a flaky free line, a slow downgrade against its own
// baseline, and wrong answers, on the virtual-clock fleet of test/sim. Prints figures; asserts nothing.
//   npx tsx bench/detection/judgment.ts [--seeds 10] [--only noisy,flaky,drift,wrong]
import type { FaultSetting } from "../../packages/lab/src/modes";
import { Fleet, type FleetLine } from "../../test/sim/fleet";
import { mulberry32, seedFrom } from "../../test/sim/rng";
import { lab, REAL_NOISE, type Respond, SIM_SAMPLES } from "../../test/sim/upstreams";
import { benchArgs } from "../args";
import { route, weightOf } from "./route";
import { ThresholdCheck } from "./threshold";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 10, 29);

const args = benchArgs(import.meta.url, {
  seeds: { type: "string", default: "10" },
  only: { type: "string", default: "noisy,flaky,drift,wrong" },
});
const SEEDS = Number(args.seeds);
const wanted = (name: string) => args.only.split(",").includes(name);

type LabOpts = Parameters<typeof lab>[0];
const noisy = (name: string, seed: number, extra: Partial<LabOpts> = {}): Respond =>
  lab({ name, seed, latencyAt: REAL_NOISE.latencyAt, noiseAt: REAL_NOISE.noiseAt, ...extra });

function fleet(
  seed: number,
  bad: { id: string; tier: "paid" | "free"; respond: FleetLine["respond"] },
  others = ["paid-a", "paid-b", "free-a"],
) {
  const lines: FleetLine[] = others
    .filter((id) => id !== bad.id)
    .map((id, i) => ({ id, tier: id.startsWith("paid") ? "paid" : "free", baseWeight: 100, respond: noisy(id, seedFrom(seed, i, 1)) }));
  lines.push({ ...bad, baseWeight: 100 });
  return new Fleet({ route, start: T0, seed, samples: SIM_SAMPLES, lines });
}

const count = (f: Fleet, id: string, to: string) =>
  f.events.filter((e) => e.lineId === id && e.effect.kind === "state_change" && e.effect.to === to).length;

/** ms a line spent below full weight in [from, to). */
function belowFullMs(f: Fleet, id: string, from: number, to: number): number {
  const tl = f.factorTimeline(id);
  let ms = 0;
  for (let i = 0; i < tl.length; i++) {
    const a = Math.max(from, tl[i]!.at);
    const b = Math.min(to, tl[i + 1]?.at ?? Number.POSITIVE_INFINITY);
    if (b > a && tl[i]!.factor < 1) ms += b - a;
  }
  return ms;
}

function versionsPerHour(f: Fleet, from: number, to: number): number[] {
  const hours = Math.round((to - from) / HOUR);
  return Array.from(
    { length: hours },
    (_, h) => f.tables.filter((t) => t.generatedAt > from + h * HOUR && t.generatedAt <= from + (h + 1) * HOUR).length,
  );
}

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);
const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number) => x.toFixed(2);

/** 1. Three working lines, noisy, a day per seed: false cooldowns and time below full weight, per line-day. */
function noisyDay(): void {
  const perLineDay: { cooldowns: number; belowMin: number; degraded: number }[] = [];
  let versions = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    const f = fleet(seed, { id: "free-a", tier: "free", respond: noisy("free-a", seedFrom(seed, 9, 9)) });
    f.runUntil(T0 + DAY);
    versions += f.tables.length - 1;
    for (const id of ["paid-a", "paid-b", "free-a"]) {
      perLineDay.push({
        cooldowns: count(f, id, "cooldown"),
        belowMin: belowFullMs(f, id, T0, T0 + DAY) / MIN,
        degraded: count(f, id, "degraded"),
      });
    }
  }
  const days = perLineDay.length;
  const withCooldown = perLineDay.filter((d) => d.cooldowns > 0).length;
  console.log(`\n## noisy healthy lines (${SEEDS} seeds × 3 lines = ${days} line-days)\n`);
  console.log(
    `- false cooldowns per line-day: ${f2(mean(perLineDay.map((d) => d.cooldowns)))} (line-days with any: ${withCooldown}/${days}; worst ${Math.max(...perLineDay.map((d) => d.cooldowns))})`,
  );
  console.log(
    `- minutes below full weight per line-day: mean ${f1(mean(perLineDay.map((d) => d.belowMin)))}, worst ${f1(Math.max(...perLineDay.map((d) => d.belowMin)))}`,
  );
  console.log(`- entries into degraded per line-day: ${f2(mean(perLineDay.map((d) => d.degraded)))}`);
  console.log(`- table versions per route-day: ${f1(versions / SEEDS)}`);
}

/** 2. A free line truncating half of its answers at random: versions per hour and the share it carries. */
function flakyLine(): void {
  const hours: number[] = [];
  const shares: number[] = [];
  const statusShares: number[] = [];
  let cooldowns = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    const pick = mulberry32(seedFrom(seed, 50));
    const fault = (): FaultSetting => (pick() < 0.5 ? { mode: "truncate", fraction: 0.3 } : { mode: "ok" });
    const f = fleet(seed, { id: "free-a", tier: "free", respond: noisy("free-a", seedFrom(seed, 5), { faultAt: fault }) });
    f.runUntil(T0 + DAY);
    // The first hour learns the line; count from then on.
    hours.push(...versionsPerHour(f, T0 + HOUR, T0 + DAY));
    shares.push(f.servedMs("free-a", T0 + HOUR, T0 + DAY) / (DAY - HOUR));
    cooldowns += count(f, "free-a", "cooldown");
    const pick2 = mulberry32(seedFrom(seed, 50));
    const c = new ThresholdCheck({
      respond: noisy("free-a", seedFrom(seed, 5), {
        faultAt: () => (pick2() < 0.5 ? { mode: "truncate", fraction: 0.3 } : { mode: "ok" }),
      }),
      samples: SIM_SAMPLES,
      start: T0,
      offsetMs: 0,
      verdict: "status",
    });
    c.runUntil(T0 + DAY);
    let served = 0;
    for (let i = 0; i < c.factors.length; i++) {
      const a = Math.max(T0 + HOUR, c.factors[i]!.at);
      const b = Math.min(T0 + DAY, c.factors[i + 1]?.at ?? Number.POSITIVE_INFINITY);
      if (b > a) served += (weightOf(c.factors[i]!.factor) / 10_000) * (b - a);
    }
    statusShares.push(served / (DAY - HOUR));
  }
  const share = mean(shares);
  const statusShare = mean(statusShares);
  console.log(`\n## a free line truncating 50% of its answers at random (${SEEDS} seeds × 23 h)\n`);
  console.log(`- table versions per hour: mean ${f1(mean(hours))}, worst hour ${Math.max(...hours)}`);
  console.log(`- cooldowns per day: ${f1(cooldowns / SEEDS)}`);
  console.log(
    `- share of the route's traffic it carries: ${(share * 100).toFixed(2)}% (status-only checker: ${(statusShare * 100).toFixed(2)}%; ratio ${f2(share / statusShare)})`,
  );
}

/** 3. A paid line whose plain-text answers shrink from 100% to 45% of their length over 6 h. */
function slowDowngrade(): void {
  const onset = T0 + 4 * HOUR;
  const span = 6 * HOUR;
  const shrink = (at: number) => (at < onset ? 1 : Math.max(0.45, 1 - (0.55 * (at - onset)) / span));
  const rows: string[] = [];
  const reached: number[] = [];
  for (let seed = 1; seed <= SEEDS; seed++) {
    const f = fleet(seed, {
      id: "paid-a",
      tier: "paid",
      respond: noisy("paid-a", seedFrom(seed, 7), {
        noiseAt: (s, at, rng) => {
          const n = REAL_NOISE.noiseAt(s, at, rng);
          return { ...n, lengthScale: (n.lengthScale ?? 1) * shrink(at) };
        },
      }),
    });
    f.runUntil(onset + span + HOUR);
    const half = f.factorTimeline("paid-a").find((p) => p.at >= onset && p.factor <= 0.5);
    const at = half?.at ?? null;
    if (at !== null) reached.push(shrink(at));
    rows.push(
      `| ${seed} | ${at === null ? "never" : `${f1((at - onset) / HOUR)} h`} | ${at === null ? "-" : `${Math.round(shrink(at) * 100)}%`} | ${count(f, "paid-a", "cooldown")} | ${f2(f.servedMs("paid-a", onset, onset + span) / span)} |`,
    );
  }
  console.log(`\n## a paid line shrinking to 45% of its usual length over 6 h (${SEEDS} seeds)\n`);
  console.log("| seed | onset → factor ≤ 0.5 | length then (of usual) | cooldowns | mean share during the drift |");
  console.log("|---|---|---|---|---|");
  for (const r of rows) console.log(r);
  console.log(
    `\n- down-weighted to ≤ 0.5 in ${reached.length}/${SEEDS} runs; at ${reached.length ? `${Math.round(Math.min(...reached) * 100)}–${Math.round(Math.max(...reached) * 100)}%` : "-"} of the usual length`,
  );
}

/** 4. A free line answering the correctness sample wrongly 30% of the time. */
function wrongAnswers(): void {
  const factors: number[] = [];
  const hours: number[] = [];
  let cooldowns = 0;
  let shares = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    const pick = mulberry32(seedFrom(seed, 30));
    const f = fleet(seed, {
      id: "free-a",
      tier: "free",
      respond: noisy("free-a", seedFrom(seed, 3), {
        faultAt: (_at, s) => (s.name === "travel-minutes" && pick() < 0.3 ? { mode: "downgrade" } : { mode: "ok" }),
      }),
    });
    f.runUntil(T0 + DAY);
    const tl = f.factorTimeline("free-a");
    // Time-weighted mean factor after the first hour.
    let acc = 0;
    for (let i = 0; i < tl.length; i++) {
      const a = Math.max(T0 + HOUR, tl[i]!.at);
      const b = Math.min(T0 + DAY, tl[i + 1]?.at ?? Number.POSITIVE_INFINITY);
      if (b > a) acc += tl[i]!.factor * (b - a);
    }
    factors.push(acc / (DAY - HOUR));
    hours.push(...versionsPerHour(f, T0 + HOUR, T0 + DAY));
    cooldowns += count(f, "free-a", "cooldown");
    shares += f.servedMs("free-a", T0 + HOUR, T0 + DAY) / (DAY - HOUR);
  }
  console.log(`\n## a free line answering the correctness sample wrongly 30% of the time (${SEEDS} seeds × 23 h)\n`);
  console.log(
    `- mean weight factor ${f2(mean(factors))} (per seed ${factors.map(f2).join(" ")}); share ${((shares / SEEDS) * 100).toFixed(1)}% of the route (20% when healthy)`,
  );
  console.log(
    `- cooldowns per day ${f1(cooldowns / SEEDS)}; table versions per hour: mean ${f1(mean(hours))}, worst hour ${Math.max(...hours)}`,
  );
}

const started = performance.now();
if (wanted("noisy")) noisyDay();
if (wanted("flaky")) flakyLine();
if (wanted("drift")) slowDowngrade();
if (wanted("wrong")) wrongAnswers();
console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`);
