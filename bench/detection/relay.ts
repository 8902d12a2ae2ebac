// What a relay can fake (docs/scoring.md#what-a-relay-can-fake; bench/README.md "What a relay can
// fake"): a substituted model (all requests, or a share), a line that never served its paid mates'
// model, ordinary nondeterminism, inflated usage, a relay that answers probes well, a backend whose
// answers change shape; and the false-alarm bound of the fingerprint test against simulation. The
// virtual-clock fleet of test/sim, the lab's simulated models (packages/lab/src/models.ts), core's
// scorer and health. Prints figures; asserts nothing.
//   npx tsx bench/detection/relay.ts [--seeds 10] [--only full,partial,never,nondeterminism,usage,probes,shape,golden,bound]
import {
  type FingerprintTrack,
  falseAlarmsPerLineDay,
  fingerprintThreshold,
  judgeFingerprint,
  stepFingerprint,
  variantKey,
} from "../../packages/core/src/index";
import {
  answerText,
  buildModel,
  byFixedPrompt,
  byHeader,
  FINGERPRINT_BANK,
  honest,
  modalDifference,
  recognisesProbes,
  type Serving,
  type SimModel,
  siblingModel,
  substitute,
  withSecondChoice,
} from "../../packages/lab/src/models";
import type { FaultSetting } from "../../packages/lab/src/modes";
import { Fleet, type FleetLine, type SimSample } from "../../test/sim/fleet";
import { otherProviderBody, RELAY_SAMPLES, relayLine, type UsageReport } from "../../test/sim/relay";
import { mulberry32, seedFrom } from "../../test/sim/rng";
import { REAL_NOISE, SIM_SAMPLES } from "../../test/sim/upstreams";
import { benchArgs } from "../args";
import { route } from "./route";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 10, 29);
/** Hours the lines are probed before a fault: their fingerprint anchors are ~200 answers per phrasing. */
const WARM_H = 8;

const args = benchArgs(import.meta.url, {
  seeds: { type: "string", default: "10" },
  only: { type: "string", default: "full,partial,never,nondeterminism,usage,probes,shape,golden,bound" },
});
const SEEDS = Number(args.seeds);
const wanted = (name: string) => args.only.split(",").includes(name);
const seeds = Array.from({ length: SEEDS }, (_, i) => i + 1);

interface World {
  real: SimModel;
  cheap: SimModel;
}
/** The model the lines name, and a sibling whose modal answer differs on 30% of the bank's prompts. */
function world(seed: number): World {
  const real = buildModel({ name: "m-large", seed });
  return { real, cheap: siblingModel(real, { name: "m-mini", seed: seed + 1000, differOn: 0.3 }) };
}

interface BadLine {
  id: "free-a" | "paid-b";
  servingAt: (at: number) => Serving;
  usageAt?: (at: number) => UsageReport;
  joinAt?: number;
  probeHeaders?: Record<string, string>;
  rewrite?: boolean;
}

/** paid-a, paid-b, free-a on one route, all naming model m-large; `bad` replaces one of them. */
function fleet(
  seed: number,
  w: World,
  bad: BadLine,
  usageOf: (id: string) => UsageReport = () => ({}),
  real = w.real,
  samples: SimSample[] = RELAY_SAMPLES,
  faultAt?: (at: number) => FaultSetting,
): Fleet {
  const lines: FleetLine[] = (["paid-a", "paid-b", "free-a"] as const).map((id, i) => {
    const mine = id === bad.id ? bad : null;
    return {
      id,
      tier: id.startsWith("paid") ? "paid" : "free",
      baseWeight: 100,
      model: "m-large",
      ...(mine?.joinAt !== undefined ? { joinAt: mine.joinAt } : {}),
      respond: relayLine({
        name: id,
        seed: seedFrom(seed, i, 7),
        real,
        servingAt: mine ? mine.servingAt : () => honest(real),
        usageAt: mine?.usageAt ?? (() => usageOf(id)),
        ...(mine?.probeHeaders ? { probeHeaders: mine.probeHeaders } : {}),
        ...(mine?.rewrite ? { rewriteFor: (_m, body, rng) => otherProviderBody(body, rng) } : {}),
        ...(mine && faultAt ? { faultAt } : {}),
        latencyAt: REAL_NOISE.latencyAt,
        noiseAt: REAL_NOISE.noiseAt,
      }),
    };
  });
  return new Fleet({ route, start: T0, seed, samples, lines });
}

const onsetOf = (seed: number) => T0 + WARM_H * HOUR + Math.floor(mulberry32(seedFrom(seed, 99))() * 2 * HOUR);
const firstAt = (f: Fleet, id: string, from: number, pred: (e: Fleet["events"][number]) => boolean) =>
  f.events.find((e) => e.lineId === id && e.at >= from && pred(e))?.at ?? null;
const factorAtMost = (f: Fleet, id: string, from: number, x: number) =>
  f.factorTimeline(id).find((p) => p.at >= from && p.factor <= x)?.at ?? null;
const minutes = (ms: number | null, unitMs = MIN) => (ms === null ? "never" : (ms / unitMs).toFixed(1));
function stats(xs: Array<number | null>, unitMs = MIN, unit = "min"): string {
  const hit = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
  if (hit.length === 0) return `never (0/${xs.length})`;
  const med =
    hit.length % 2 ? (hit[(hit.length - 1) / 2] as number) : ((hit[hit.length / 2 - 1] as number) + (hit[hit.length / 2] as number)) / 2;
  const miss = xs.length - hit.length;
  const f = (x: number) => minutes(x, unitMs);
  return `${f(hit[0] as number)} / **${f(med)}** / ${f(hit[hit.length - 1] as number)} ${unit}${miss > 0 ? ` (missed ${miss}/${xs.length})` : ""}`;
}

interface Detection {
  moved: number | null;
  half: number | null;
  zero: number | null;
}
/** From `from`: the first fingerprint verdict, factor ≤ 0.5, and weight 0 (cooldown) of line `id`. */
function detection(f: Fleet, id: string, from: number): Detection {
  const moved = firstAt(f, id, from, (e) => e.effect.kind === "fingerprint" && e.effect.moved);
  const half = factorAtMost(f, id, from, 0.5);
  const zero = factorAtMost(f, id, from, 0);
  const rel = (t: number | null) => (t === null ? null : t - from);
  return { moved: rel(moved), half: rel(half), zero: rel(zero) };
}

function row(name: string, ds: Detection[], goal: string): string {
  return `| ${name} | ${stats(ds.map((d) => d.moved))} | ${stats(ds.map((d) => d.half))} | ${goal} |`;
}
const HEADER =
  "| scenario | first fingerprint verdict (min / median / max) | factor ≤ 0.5 (min / median / max) | goal |\n|---|---|---|---|";

function substitution(share: number, lineId: BadLine["id"], spanH: number): Detection[] {
  return seeds.map((seed) => {
    const w = world(seed);
    const onset = onsetOf(seed);
    const f = fleet(seed, w, { id: lineId, servingAt: (at) => (at >= onset ? substitute(w.real, w.cheap, share) : honest(w.real)) });
    f.runUntil(onset + spanH * HOUR);
    return detection(f, lineId, onset);
  });
}

function fullAndPartial(): void {
  const diffs = seeds.map((s) => modalDifference(world(s).real, world(s).cheap));
  console.log(
    `\n## substituted model (${SEEDS} seeds; the substitute's modal answer differs on ${Math.min(...diffs) * 100}–${Math.max(...diffs) * 100}% of the bank's prompts)\n`,
  );
  console.log(HEADER);
  if (wanted("full")) {
    console.log(row("full substitution, free line (2 paid peers)", substitution(1, "free-a", 1), "≤ 15 median, ≤ 30 max"));
    console.log(row("full substitution, paid line (1 paid peer: own anchors only)", substitution(1, "paid-b", 1), "≤ 15 median, ≤ 30 max"));
  }
  if (wanted("partial")) {
    console.log(row("partial substitution 25%, free line", substitution(0.25, "free-a", 3), "≤ 120"));
    console.log(row("partial substitution 25%, paid line", substitution(0.25, "paid-b", 3), "≤ 120"));
  }
}

function neverMatched(): void {
  const ds = seeds.map((seed) => {
    const w = world(seed);
    const join = onsetOf(seed);
    const f = fleet(seed, w, { id: "free-a", joinAt: join, servingAt: () => honest(w.cheap) });
    f.runUntil(join + 1.5 * HOUR);
    return detection(f, "free-a", join);
  });
  console.log(`\n## never matched: a free line joining the route that always served the sibling model (${SEEDS} seeds)\n`);
  console.log(HEADER);
  console.log(row("from joining", ds, "flagged ≤ 60"));
}

function nondeterminism(): void {
  let cooldowns = 0;
  let verdicts = 0;
  let answers = 0;
  /** After the first hour (the golden samples' length anchors warm up in it), and in it. */
  const low = { after: 1, first: 1 };
  const below = { after: 0, first: 0 };
  const fingerprintFailures: string[] = [];
  for (const seed of seeds) {
    const w = world(seed);
    const noisy = withSecondChoice(w.real, 0.1, seed);
    const f = fleet(seed, w, { id: "free-a", servingAt: () => honest(noisy) }, () => ({}), noisy);
    f.runUntil(T0 + DAY);
    for (const id of ["paid-a", "paid-b", "free-a"]) {
      cooldowns += f.events.filter((e) => e.lineId === id && e.effect.kind === "state_change" && e.effect.to === "cooldown").length;
      verdicts += f.events.filter((e) => e.lineId === id && e.effect.kind === "fingerprint" && e.effect.moved).length;
      const tl = f.factorTimeline(id);
      for (let i = 0; i < tl.length; i++) {
        const p = tl[i] as { at: number; factor: number };
        const end = Math.min(T0 + DAY, tl[i + 1]?.at ?? T0 + DAY);
        const part = p.at < T0 + HOUR ? "first" : "after";
        low[part] = Math.min(low[part], p.factor);
        if (p.factor < 0.9) below[part] += end - p.at;
      }
      const results = f.results(id);
      answers += results.filter((r) => r.sampleId.startsWith("fp-")).length;
      for (const r of results) if (r.failedChecks.includes("fingerprint")) fingerprintFailures.push(`${seed}/${id}/${r.sampleId}`);
    }
  }
  const h = fingerprintThreshold({ samples: FINGERPRINT_BANK.length, intervalMs: 45_000 });
  console.log(
    `\n## nondeterminism: every line answers its second choice 10% of the time (${SEEDS} seeds × 3 lines = ${SEEDS * 3} line-days)\n`,
  );
  console.log(`- fingerprint answers judged: ${answers}; fingerprint verdicts (a statistic at h = ${h.toFixed(2)}): ${verdicts}`);
  console.log(
    `- fingerprint check failures: ${fingerprintFailures.length}${fingerprintFailures.length ? ` (${fingerprintFailures.slice(0, 5).join(", ")})` : ""}`,
  );
  console.log(`- cooldowns: ${cooldowns} (goal 0)`);
  console.log(
    `- lowest factor after the first hour: ${low.after.toFixed(2)} (goal ≥ 0.9), minutes below 0.9: ${(below.after / MIN).toFixed(1)}; ` +
      `in the first hour (the golden samples' length anchors warming up on answers ±40% long, as without fingerprints): ${low.first.toFixed(2)}, ${(below.first / MIN).toFixed(1)} min`,
  );
  console.log(
    `- designed false fingerprint verdicts: ${(falseAlarmsPerLineDay(h, FINGERPRINT_BANK.length, 45_000) * 1000).toFixed(2)} per 1000 line-days`,
  );
}

function usage(): void {
  const ds: Array<number | null> = [];
  const paid: Array<number | null> = [];
  let honestFailures = 0;
  let honestProbes = 0;
  // Honest lines differ by ±2 tokens from the true count: paid-a by a jitter of up to 2 each time,
  // paid-b always 2 fewer, free-a always 2 more (so free-a and paid-b differ by 4).
  const honestUsage = (id: string): UsageReport => (id === "paid-a" ? { jitter: 2 } : { offset: id === "free-a" ? 2 : -2 });
  for (const seed of seeds) {
    const w = world(seed);
    const onset = onsetOf(seed);
    for (const id of ["free-a", "paid-b"] as const) {
      const f = fleet(
        seed,
        w,
        { id, servingAt: () => honest(w.real), usageAt: (at) => (at >= onset ? { ...honestUsage(id), factor: 1.2 } : honestUsage(id)) },
        honestUsage,
      );
      f.runUntil(onset + 30 * MIN);
      const after = f.results(id).filter((r) => r.at >= onset);
      const k = after.findIndex((r) => r.failedChecks.includes("usage"));
      (id === "free-a" ? ds : paid).push(k < 0 ? null : k + 1);
      for (const l of ["paid-a", "paid-b", "free-a"]) {
        const before = f.results(l).filter((r) => r.at < onset || l !== id);
        honestProbes += before.length;
        honestFailures += before.filter((r) => r.failedChecks.includes("usage")).length;
      }
    }
  }
  const probes = (xs: Array<number | null>) => {
    const hit = xs.filter((x): x is number => x !== null);
    return `${hit.length}/${xs.length} caught; probes to the first failed usage check: ${hit.length ? `max ${Math.max(...hit)}, mean ${(hit.reduce((a, x) => a + x, 0) / hit.length).toFixed(2)}` : "-"} (per seed ${xs.map((x) => x ?? "-").join(", ")})`;
  };
  console.log(`\n## usage ×1.2 from a moment on (${SEEDS} seeds); honest lines differing by ±2 tokens\n`);
  console.log(`- free line (2 paid peers): ${probes(ds)} (goal ≤ 2)`);
  console.log(`- paid line (own anchors): ${probes(paid)} (goal ≤ 2)`);
  console.log(`- honest ±2 tokens: ${honestFailures} failed usage checks in ${honestProbes} probes (goal 0)`);
}

function probeAware(): void {
  const cases: Array<[string, (w: World, onset: number) => BadLine, number]> = [
    [
      "knows each prompt's fixed wording, from a moment on",
      (w, onset) => ({
        id: "free-a",
        servingAt: (at) => (at >= onset ? recognisesProbes(w.real, w.cheap, byFixedPrompt(0)) : honest(w.real)),
      }),
      1,
    ],
    [
      "knows each prompt's fixed wording, since joining",
      (w, onset) => ({ id: "free-a", joinAt: onset, servingAt: () => recognisesProbes(w.real, w.cheap, byFixedPrompt(0)) }),
      1.5,
    ],
    [
      "looks for a probe header; probes send none",
      (w, onset) => ({
        id: "free-a",
        servingAt: (at) => (at >= onset ? recognisesProbes(w.real, w.cheap, byHeader("x-probe")) : honest(w.real)),
      }),
      1,
    ],
    [
      "looks for a probe header; probes that sent one (what the design avoids)",
      (w, onset) => ({
        id: "free-a",
        probeHeaders: { "x-probe": "1" },
        servingAt: (at) => (at >= onset ? recognisesProbes(w.real, w.cheap, byHeader("x-probe")) : honest(w.real)),
      }),
      1,
    ],
  ];
  console.log(`\n## a relay that answers what it takes for probes with the real model, the rest with the sibling (${SEEDS} seeds)\n`);
  console.log(HEADER);
  for (const [name, make, spanH] of cases) {
    const ds = seeds.map((seed) => {
      const w = world(seed);
      const onset = onsetOf(seed);
      const f = fleet(seed, w, make(w, onset));
      f.runUntil(onset + spanH * HOUR);
      return detection(f, "free-a", onset);
    });
    console.log(row(name, ds, ""));
  }
}

function shape(): void {
  const same: Detection[] = [];
  const other: Detection[] = [];
  const changes: Array<number | null> = [];
  for (const seed of seeds) {
    const w = world(seed);
    const onset = onsetOf(seed);
    for (const rewrite of [false, true]) {
      const f = fleet(seed, w, {
        id: "paid-b",
        rewrite,
        servingAt: (at) => (at >= onset ? substitute(w.real, w.cheap, 1) : honest(w.real)),
      });
      f.runUntil(onset + HOUR);
      (rewrite ? other : same).push(detection(f, "paid-b", onset));
      if (rewrite) {
        const at = firstAt(f, "paid-b", onset, (e) => e.effect.kind === "shape_change");
        changes.push(at === null ? null : at - onset);
      }
    }
  }
  console.log(
    `\n## full substitution on the paid line, its answers from another provider (another id format, other fields) (${SEEDS} seeds)\n`,
  );
  console.log(`- shape_change event after the onset: ${stats(changes)}`);
  console.log(HEADER);
  console.log(row("same shape (a careful relay)", same, ""));
  console.log(row("another provider's shape (fast probing, threshold − ln 20)", other, ""));
}

/**
 * The golden samples' faults with the bank in the schedule: 14 samples per line every 45 s instead
 * of 4 (each sample still every 45 s, the golden ones spread among the fingerprint ones).
 */
function golden(): void {
  const faults: Array<[string, FaultSetting]> = [
    ["truncate", { mode: "truncate", fraction: 0.3 }],
    ["stale", { mode: "stale" }],
    ["downgrade", { mode: "downgrade" }],
  ];
  console.log(`\n## the golden samples' faults on free-a, without and with the bank in the schedule (${SEEDS} seeds; time to weight 0)\n`);
  console.log("| fault | 4 golden samples (min / median / max) | 4 golden + 10 fingerprint samples (min / median / max) |\n|---|---|---|");
  for (const [name, setting] of faults) {
    const cells = [SIM_SAMPLES, RELAY_SAMPLES].map((samples) =>
      stats(
        seeds.map((seed) => {
          const w = world(seed);
          const onset = onsetOf(seed);
          const f = fleet(
            seed,
            w,
            { id: "free-a", servingAt: () => honest(w.real) },
            () => ({}),
            w.real,
            samples,
            (at) => (at >= onset ? setting : { mode: "ok" }),
          );
          f.runUntil(onset + 30 * MIN);
          return detection(f, "free-a", onset).zero;
        }),
        1000,
        "s",
      ),
    );
    console.log(`| ${name} | ${cells.join(" | ")} |`);
  }
}

/**
 * The bound against simulation, without the fleet: honest answer streams (the model's own
 * nondeterminism, and 10% second choices) through the judge with the anchor learning as in service,
 * counting entries of a statistic into ≥ h, per statistic-answer, at thresholds low enough to see them.
 */
function bound(): void {
  const answersPerSample = 20_000;
  console.log(
    `\n## false-alarm bound: crossings per statistic-answer, honest lines (${SEEDS} seeds × ${FINGERPRINT_BANK.length} samples × ${answersPerSample} answers)\n`,
  );
  console.log("| h | bound exp(−h) | measured, model as built | measured, 10% second choice |\n|---|---|---|---|");
  for (const h of [3, 4, 5, 6, 8]) {
    const measured = [false, true].map((second) => {
      let crossings = 0;
      let judged = 0;
      for (const seed of seeds) {
        const base = buildModel({ name: "m-large", seed });
        const model = second ? withSecondChoice(base, 0.1, seed) : base;
        const rng = mulberry32(seedFrom(seed, h, second ? 1 : 0));
        for (const p of FINGERPRINT_BANK) {
          let track: FingerprintTrack | undefined;
          for (let i = 0; i < answersPerSample; i++) {
            const phrasing = Math.floor(rng() * p.phrasings.length);
            const text = p.phrasings[phrasing] as string;
            const j = judgeFingerprint({
              expect: { fingerprint: { form: p.form, ...(p.options ? { options: [...p.options] } : {}) } },
              request: { messages: [{ role: "user", content: text }], max_tokens: p.maxTokens, temperature: 0 },
              variant: variantKey(text),
              content: answerText(model, p.id, phrasing, rng),
              tier: "paid",
              track,
              peers: [],
              threshold: h,
            });
            if (!j.step) break;
            if (j.step.own !== null) judged++;
            const wasFailing = (track?.own ?? 0) >= h;
            track = stepFingerprint(track, j.step, true);
            if (!wasFailing && track.own >= h) crossings++;
          }
        }
      }
      return `${(crossings / Math.max(1, judged)).toExponential(2)} (${crossings} in ${judged})`;
    });
    console.log(`| ${h} | ${Math.exp(-h).toExponential(2)} | ${measured[0]} | ${measured[1]} |`);
  }
  const h = fingerprintThreshold({ samples: FINGERPRINT_BANK.length, intervalMs: 45_000 });
  console.log(
    `\nThe product's threshold for ${FINGERPRINT_BANK.length} samples at 45 s and 1 false verdict per 1000 line-days: h = ln(2 · ${FINGERPRINT_BANK.length} · 1920 · 1000) = ${h.toFixed(2)} (exp(−h) = ${Math.exp(-h).toExponential(2)} per statistic-answer).`,
  );
}

const started = performance.now();
console.log(
  `relay benchmark: route paid-a, paid-b (paid), free-a (free), all naming m-large; ${RELAY_SAMPLES.length} samples per line (4 golden + ${FINGERPRINT_BANK.length} fingerprint) every 45 s; real noise on the golden samples; faults ${WARM_H}–${WARM_H + 2} h in`,
);
if (wanted("full") || wanted("partial")) fullAndPartial();
if (wanted("never")) neverMatched();
if (wanted("nondeterminism")) nondeterminism();
if (wanted("usage")) usage();
if (wanted("probes")) probeAware();
if (wanted("shape")) shape();
if (wanted("golden")) golden();
if (wanted("bound")) bound();
console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`);
