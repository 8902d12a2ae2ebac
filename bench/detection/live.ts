// Live evidence through ejection (bench/README.md, "Live evidence through ejection"; issue 27 item 1):
// a fake-200 line (golden samples answered perfectly, every long real prompt an empty 200) next to a
// good line, real client traffic through real routers on default settings (ejection after 3 failures,
// reports every 5 s), a real control plane on default settings (its scheduler probing) over an
// embedded PGlite, all on 127.0.0.1 in this process. Measures the time from the first request to the
// first table that gives the fake line weight 0, per request rate and number of routers; a run that
// has not got there after --max-sec counts as "> max". Prints figures; asserts nothing. Uses only
// APIs main has too, so a copy of main runs it for the before figures (bench/README.md says how).
//   npx tsx bench/detection/live.ts [--rates 1,10,50] [--routers 1,2] [--runs 1] [--max-sec 180]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, startControlPlane } from "../../apps/control-plane/src/index";
import { startRouter } from "../../apps/router/src/index";
import { startLab } from "../../packages/lab/src/index";
import { silentLogger } from "../../packages/router-client/src/index";
import { benchArgs } from "../args";

const args = benchArgs(import.meta.url, {
  rates: { type: "string", default: "1,10,50" },
  routers: { type: "string", default: "1,2" },
  runs: { type: "string", default: "1" },
  "max-sec": { type: "string", default: "180" },
});
const RATES = args.rates.split(",").map(Number);
const ROUTERS = args.routers.split(",").map(Number);
const RUNS = Number(args.runs);
const MAX_MS = Number(args["max-sec"]) * 1000;
const LONG = "Please summarise the following report in two sentences. ".repeat(40);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Run {
  /** ms to weight 0; null: not within MAX_MS. */
  toZeroMs: number | null;
  sent: number;
  /** Answers a client got that were not a good 200 (in-band failover should leave none). */
  badAnswers: number;
  /** Sum of linewatch_router_held_back_total for the fake line (null: the router has no such metric). */
  heldBack: number | null;
  reason: string;
  /** s from the first request to the first live_evidence event (the first suspect judgment). */
  firstSuspectS: number | null;
}

async function post(cpUrl: string, path: string, body: unknown): Promise<{ id: string }> {
  const res = await fetch(`${cpUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
}

async function runOnce(rate: number, routerCount: number, run: number): Promise<Run> {
  const dataDir = mkdtempSync(join(tmpdir(), "lw-live-bench-"));
  const lab = await startLab({ lines: [{ name: "bad", mode: { mode: "long-prompt", minPromptChars: 1500 } }, { name: "good" }] });
  const cp = await startControlPlane(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", LINEWATCH_DATA_DIR: dataDir, LINEWATCH_SECRET_KEY: "ab".repeat(32) }),
  );
  const routers: Awaited<ReturnType<typeof startRouter>>[] = [];
  try {
    await post(cp.url, "/v1/routes", { name: "chat" });
    const line = (name: string) => ({
      name,
      tier: "paid",
      protocol: "openai-chat",
      model: "lab-model",
      baseUrl: lab.baseUrl(name),
      routes: [{ route: "chat", weight: 1 }],
    });
    const bad = await post(cp.url, "/v1/lines", line("bad"));
    await post(cp.url, "/v1/lines", line("good"));
    for (let i = 0; i < routerCount; i++) {
      routers.push(
        await startRouter({
          controlPlaneUrl: cp.url,
          routes: ["chat"],
          port: 0,
          cacheFile: null,
          logger: silentLogger,
          processMetrics: false,
          routerId: `bench-${run}-${i + 1}`,
        }),
      );
    }
    for (const r of routers) while (!r.client.ready()) await sleep(50);
    const weight = async () => {
      const t = (await (await fetch(`${cp.url}/v1/tables/chat`)).json()) as { lines: { id: string; weight: number }[] };
      return t.lines.find((l) => l.id === bad.id)?.weight ?? 0;
    };
    if ((await weight()) === 0) throw new Error("the fake line has weight 0 before any traffic");
    const started = Date.now();
    let toZeroMs: number | null = null;
    let sent = 0;
    let badAnswers = 0;
    const inFlight = new Set<Promise<void>>();
    const watcher = (async () => {
      while (toZeroMs === null && Date.now() - started < MAX_MS) {
        if ((await weight()) === 0) toZeroMs = Date.now() - started;
        else await sleep(200);
      }
    })();
    while (toZeroMs === null && Date.now() - started < MAX_MS) {
      const r = routers[sent % routers.length] as (typeof routers)[number];
      sent += 1;
      const p = (async () => {
        try {
          const res = await fetch(`${r.url}/v1/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: LONG }] }),
          });
          const body = (await res.json()) as { choices?: { message?: { content?: string } }[] };
          if (res.status !== 200 || !body.choices?.[0]?.message?.content) badAnswers += 1;
        } catch {
          badAnswers += 1;
        }
      })();
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      await sleep(Math.max(0, started + (sent * 1000) / rate - Date.now()));
    }
    await watcher;
    await Promise.all([...inFlight]);
    let heldBack: number | null = null;
    for (const r of routers) {
      const text = await (await fetch(`${r.url}/metrics`)).text();
      const m = /linewatch_router_held_back_total\{route="chat",line="bad"\} (\d+)/.exec(text);
      if (m) heldBack = (heldBack ?? 0) + Number(m[1]);
      else if (text.includes("linewatch_router_held_back_total")) heldBack ??= 0;
    }
    const events = (await (await fetch(`${cp.url}/v1/events?kind=state_change&line=${bad.id}`)).json()) as {
      events: { reason: string; data: { to: string } }[];
    };
    const reason = events.events.find((e) => e.data.to === "cooldown")?.reason ?? "";
    const live = (await (await fetch(`${cp.url}/v1/events?kind=live_evidence&line=${bad.id}`)).json()) as { events: { at: string }[] };
    const first = live.events.at(-1);
    const firstSuspectS = first === undefined ? null : (Date.parse(first.at) - started) / 1000;
    return { toZeroMs, sent, badAnswers, heldBack, reason, firstSuspectS };
  } finally {
    for (const r of routers) await r.close();
    await cp.stop();
    await lab.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: string[] = [];
  console.log(
    `live evidence through ejection: fake-200 line + good line, default router and control-plane settings, cap ${MAX_MS / 1000} s\n`,
  );
  for (const routers of ROUTERS) {
    for (const rate of RATES) {
      for (let run = 0; run < RUNS; run++) {
        const r = await runOnce(rate, routers, run);
        const t = r.toZeroMs === null ? `> ${MAX_MS / 1000}` : (r.toZeroMs / 1000).toFixed(1);
        const suspect = r.firstSuspectS === null ? "–" : r.firstSuspectS.toFixed(1);
        const row = `| ${rate} | ${routers} | ${t} | ${suspect} | ${r.sent} | ${r.heldBack ?? "–"} | ${r.badAnswers} | ${r.reason.slice(0, 150)} |`;
        process.stderr.write(`${row}\n`);
        rows.push(row);
      }
    }
  }
  console.log(
    "| req/s | routers | s to weight 0 | s to first suspect | requests sent | held back (router metric) | bad answers to clients | cooldown reason |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) console.log(r);
}

await main();
