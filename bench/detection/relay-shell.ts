// What a relay can fake, through the shell (bench/README.md "What a relay can fake, through the
// shell"): the real control plane (prober, health service, PGlite) probing lab lines over HTTP with
// the shipped fingerprint bank (10 prompts × 3 phrasings, rotated at random) and the 4 golden
// samples. Time is counted in rounds: one round probes every line once with every sample
// (POST /v1/lines/:id/probe), one regular interval of 45 s. Per seed a model `m-<seed>` and its
// sibling whose modal answer differs on 30% of the bank's prompts (the lab's `substitute` and
// `recognise-probes` modes). Route: paid-a, paid-b, paid-c (paid, honest) and five free lines, all
// naming the model; after the warm-up (anchors of ~40 answers per phrasing) the free lines are
// substituted (all requests; 25%), served by relays that recognise a fixed wording or a header, or
// bill ×1.2. Prints rounds (and minutes at 45 s) to a factor ≤ 0.5, probes to the first failed usage
// check, and the honest lines' fingerprint and usage failures. Manual probes send no confirming
// re-probe (the scheduler would, 5 s after a first failure): detection through the scheduler is
// at most this. Asserts nothing.
//   npx tsx bench/detection/relay-shell.ts [--seeds 5] [--warm 100] [--rounds 160] [--only free-usage,…]
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { LineHealth } from "@linewatch/contract";
import { mulberry32 } from "@linewatch/core";
import { createDb } from "@linewatch/db";
import { startLab } from "@linewatch/lab";
import { loadConfig } from "../../apps/control-plane/src/config";
import { systemClock } from "../../apps/control-plane/src/deps";
import { createLogger } from "../../apps/control-plane/src/logger";
import { createSecretBox } from "../../apps/control-plane/src/secrets";
import { serveControlPlane } from "../../apps/control-plane/src/server";
import { benchArgs } from "../args";

const args = benchArgs(import.meta.url, {
  seeds: { type: "string", default: "5" },
  warm: { type: "string", default: "100" },
  rounds: { type: "string", default: "160" },
  only: { type: "string", default: "" },
});
const SEEDS = Number(args.seeds);
const WARM = Number(args.warm);
const ROUNDS = Number(args.rounds);
const INTERVAL_S = 45;

const HONEST = ["paid-a", "paid-b", "paid-c"];
const ALL_FAULTS = {
  "free-full": { mode: "substitute", share: 1, differOn: 0.3 },
  "free-part": { mode: "substitute", share: 0.25, differOn: 0.3 },
  "free-fixed": { mode: "recognise-probes", by: "fixed-prompt", differOn: 0.3 },
  "free-header": { mode: "recognise-probes", by: "header", header: "x-probe", differOn: 0.3 },
  "free-usage": { mode: "inflate-usage", factor: 1.2 },
} as const;
type Faulted = keyof typeof ALL_FAULTS;
/** The faulted lines this run has (`--only`: a comma-separated list; default all). */
const FAULTS: Partial<typeof ALL_FAULTS> = Object.fromEntries(
  Object.entries(ALL_FAULTS).filter(([name]) => args.only === "" || args.only.split(",").includes(name)),
);

interface SeedResult {
  caughtAt: Partial<Record<Faulted, number>>;
  usageFirstFail: number | null;
  honestFingerprintFails: number;
  honestUsageFails: number;
  honestAnswers: number;
  healthBytes: number;
  wallS: number;
}

async function runSeed(seed: number): Promise<SeedResult> {
  const t0 = performance.now();
  const model = `m-${seed}`;
  const names = [...HONEST, ...Object.keys(FAULTS)];
  const lab = await startLab({ lines: names.map((name) => ({ name, seed: `${name}-${seed}`, model })) });
  const database = await createDb({ dataDir: "memory" });
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    LINEWATCH_SCHEDULER: "false",
    LINEWATCH_BATCH_LINGER_MS: "0",
  });
  const cp = await serveControlPlane(
    { config, database, clock: systemClock, logger: createLogger("silent"), secrets: createSecretBox(randomBytes(32).toString("hex")) },
    { rng: mulberry32(seed) },
  );
  const api = async (path: string, init: { method?: string; json?: unknown } = {}) => {
    const res = await fetch(`${cp.url}${path}`, {
      method: init.method ?? "GET",
      headers: init.json === undefined ? {} : { "content-type": "application/json" },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<unknown>;
  };
  await api("/v1/routes", { method: "POST", json: { name: "chat" } });
  const ids: Record<string, string> = {};
  for (const name of names) {
    const line = (await api("/v1/lines", {
      method: "POST",
      json: {
        name,
        tier: HONEST.includes(name) ? "paid" : "free",
        protocol: "openai-chat",
        model,
        baseUrl: lab.baseUrl(name),
        probeIntervalSec: INTERVAL_S,
        routes: [{ route: "chat", weight: 100 }],
      },
    })) as { id: string };
    ids[name] = line.id;
  }
  type Result = { passed: boolean; checks: { name: string; verdict: string }[] };
  const probe = async (name: string) => ((await api(`/v1/lines/${ids[name]}/probe`, { method: "POST" })) as { results: Result[] }).results;
  const failedCheck = (rs: Result[], check: string) =>
    rs.filter((r) => r.checks.some((c) => c.name === check && c.verdict === "fail")).length;
  const out: SeedResult = {
    caughtAt: {},
    usageFirstFail: null,
    honestFingerprintFails: 0,
    honestUsageFails: 0,
    honestAnswers: 0,
    healthBytes: 0,
    wallS: 0,
  };
  const honestRound = async () => {
    for (const name of HONEST) {
      const rs = await probe(name);
      out.honestFingerprintFails += failedCheck(rs, "fingerprint");
      out.honestUsageFails += failedCheck(rs, "usage");
      out.honestAnswers += rs.length;
    }
  };
  for (let r = 0; r < WARM; r++) {
    await honestRound();
    for (const name of Object.keys(FAULTS)) await probe(name);
  }
  for (const [name, mode] of Object.entries(FAULTS)) {
    const { mode: m, ...params } = mode;
    lab.setMode(name, m, params as never);
  }
  let usageProbes = 0;
  const substituted = Object.keys(FAULTS).filter((name) => name !== "free-usage").length;
  const done = () => Object.keys(out.caughtAt).length >= substituted && (!("free-usage" in FAULTS) || out.usageFirstFail !== null);
  for (let r = 1; r <= ROUNDS && !done(); r++) {
    await honestRound();
    for (const name of Object.keys(FAULTS) as Faulted[]) {
      if (name !== "free-usage" && out.caughtAt[name] !== undefined) continue;
      const rs = await probe(name);
      if (name === "free-usage") {
        for (const x of rs) {
          if (out.usageFirstFail !== null) break;
          usageProbes++;
          if (x.checks.some((c) => c.name === "usage" && c.verdict === "fail")) out.usageFirstFail = usageProbes;
        }
        continue;
      }
      const h = (await api(`/v1/lines/${ids[name]}/health`)) as LineHealth;
      if (h.weightFactor <= 0.5) out.caughtAt[name] = r;
    }
  }
  const rows = (await database.db.execute("select max(length(health::text))::int as n from line_health" as never)) as unknown as
    | { rows: { n: number }[] }
    | { n: number }[];
  out.healthBytes = (Array.isArray(rows) ? rows : rows.rows)[0]?.n ?? 0;
  await cp.close();
  await database.close();
  await lab.close();
  out.wallS = Math.round((performance.now() - t0) / 1000);
  return out;
}

const results: SeedResult[] = [];
for (let seed = 1; seed <= SEEDS; seed++) {
  const r = await runSeed(seed);
  results.push(r);
  console.log(`seed ${seed}: ${JSON.stringify(r)}`);
}
const q = (xs: number[]) => {
  if (xs.length === 0) return "—";
  const s = [...xs].sort((a, b) => a - b);
  const min = (x: number) => `${x} (${((x * INTERVAL_S) / 60).toFixed(1)} min)`;
  return `${min(s[0] as number)} / ${min(s[Math.floor((s.length - 1) / 2)] as number)} / ${min(s[s.length - 1] as number)}`;
};
console.log(
  `\n${SEEDS} seeds, warm-up ${WARM} rounds, then up to ${ROUNDS} rounds; rounds to factor ≤ 0.5 (min / median / max), caught n/${SEEDS}:`,
);
for (const name of Object.keys(FAULTS) as Faulted[]) {
  if (name === "free-usage") continue;
  const got = results.flatMap((r) => (r.caughtAt[name] === undefined ? [] : [r.caughtAt[name] as number]));
  console.log(`  ${name.padEnd(12)} ${q(got)}   caught ${got.length}/${SEEDS}`);
}
const usage = results.flatMap((r) => (r.usageFirstFail === null ? [] : [r.usageFirstFail]));
console.log(`  usage ×1.2: probes to the first failed usage check ${usage.join(", ")} (${usage.length}/${SEEDS})`);
const honest = results.reduce((a, r) => a + r.honestAnswers, 0);
console.log(
  `  honest paid lines: ${results.reduce((a, r) => a + r.honestFingerprintFails, 0)} fingerprint and ${results.reduce((a, r) => a + r.honestUsageFails, 0)} usage failures in ${honest} probes`,
);
console.log(
  `  largest health record: ${Math.max(...results.map((r) => r.healthBytes))} bytes; wall ${results.reduce((a, r) => a + r.wallS, 0)} s`,
);
