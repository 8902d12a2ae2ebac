// Live evidence through ejection on a virtual clock (bench/README.md, "Live evidence through
// ejection"; issue 27 item 1): the routers' picker, ejection, retry budget, held-back count and early
// push of packages/router-client and apps/router, and core's live judgment, in test/sim/live-traffic.ts.
// Two figures: false alarms per line-day of healthy lines with 1% and 5% random 5xx (whole days, several
// seeds), and the time a fake-200 line takes to the cooldown live evidence alone would bring, with the
// `failing` rule and without it (as main judged: 20 answers first). Prints figures; asserts nothing.
//   npx tsx bench/detection/live-sim.ts [--days 1] [--seeds 3] [--rates 1,10,50] [--routers 1,2]
import { DEFAULT_LIVE_VERDICT, type LiveOutcome } from "../../packages/core/src/index";
import { type LiveJudgment, liveCooldownAt, randomFailures, simulateLive } from "../../test/sim/live-traffic";
import { benchArgs } from "../args";

const args = benchArgs(import.meta.url, {
  days: { type: "string", default: "1" },
  seeds: { type: "string", default: "3" },
  rates: { type: "string", default: "1,10,50" },
  routers: { type: "string", default: "1,2" },
});
const DAYS = Number(args.days);
const SEEDS = Number(args.seeds);
const RATES = args.rates.split(",").map(Number);
const ROUTERS = args.routers.split(",").map(Number);
const T0 = Date.UTC(2026, 11, 4);
const DAY = 86_400_000;
const BEFORE = { ...DEFAULT_LIVE_VERDICT, failingAnswers: Number.POSITIVE_INFINITY };

function falseAlarms(): void {
  console.log(`healthy lines (3 on the route, one judged), ${DAYS} day(s) × ${SEEDS} seeds per cell: suspect judgments / judgments\n`);
  console.log("| random 5xx | req/s | routers | suspect (after) | judgments | judgments naming held back |");
  console.log("|---|---|---|---|---|---|");
  for (const p of [0.01, 0.05]) {
    for (const routers of ROUTERS) {
      for (const rate of RATES) {
        let suspect = 0;
        let n = 0;
        let held = 0;
        const started = performance.now();
        for (let seed = 1; seed <= SEEDS; seed++) {
          const lines = ["a", "b", "c"].map((id) => ({ id, weight: 3333, answer: randomFailures(p) }));
          simulateLive({ lines, ratePerSec: rate, routers, start: T0, end: T0 + DAYS * DAY, seed, judge: ["a"] }, (j) => {
            n += 1;
            if (j.verdict.suspect) suspect += 1;
            if (j.verdict.reason.includes("held back by ejection")) held += 1;
          });
        }
        console.log(`| ${p * 100}% | ${rate} | ${routers} | ${suspect} | ${n} | ${held} |`);
        process.stderr.write(`  ${p} ${rate}/s ${routers} router(s): ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
      }
    }
  }
}

function fake200(): void {
  const runs = 20;
  console.log(
    `\nthe fake-200 line (every answer empty) next to a line with 1% 5xx: s to the live cooldown, median / max of ${runs} seeds\n`,
  );
  console.log("| req/s | routers | before (20 answers first) | after (`failing`) |");
  console.log("|---|---|---|---|");
  const lines = [
    { id: "fake", weight: 5000, answer: (): LiveOutcome => "empty" },
    { id: "good", weight: 5000, answer: randomFailures(0.01) },
  ];
  for (const routers of ROUTERS) {
    for (const rate of RATES) {
      const cell = (policy: typeof DEFAULT_LIVE_VERDICT) => {
        const xs: number[] = [];
        let missed = 0;
        for (let seed = 1; seed <= runs; seed++) {
          const js: LiveJudgment[] = [];
          simulateLive({ lines, ratePerSec: rate, routers, start: T0, end: T0 + 600_000, seed, judge: ["fake"], policy }, (j) =>
            js.push(j),
          );
          const at = liveCooldownAt(js, "fake");
          if (at === null) missed += 1;
          else xs.push((at - T0) / 1000);
        }
        xs.sort((a, b) => a - b);
        if (xs.length === 0) return `> 600 (${missed}/${runs})`;
        const med = xs[Math.floor(xs.length / 2)] as number;
        return `${med.toFixed(1)} / ${(xs.at(-1) as number).toFixed(1)}${missed > 0 ? ` (missed ${missed})` : ""}`;
      };
      console.log(`| ${rate} | ${routers} | ${cell(BEFORE)} | ${cell(DEFAULT_LIVE_VERDICT)} |`);
    }
  }
}

falseAlarms();
fake200();
