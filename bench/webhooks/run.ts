// Does a webhook receiver slow the health machine? (issue 26.) A line starts failing every probe;
// the figure is how long its probes take, from the first failing one until it is in cooldown (each
// probe answered once its result is scored, its health written and the tables republished), in
// three conditions measured in alternating rounds of the same run:
//   none     no webhook sinks (the baseline);
//   hung     4 sinks whose receiver never answers, every slot of the webhook worker held by them
//            (8 deliveries: each sink's line and route; LINEWATCH_WEBHOOK_TIMEOUT_MS 60 s), the
//            worker ticking every 200 ms meanwhile;
//   failing  4 sinks whose receiver answers 500 at once: every event fanned out, sent, retried.
// The control plane runs in this process on 127.0.0.1 with a lab line; PGlite by default.
//
//   npx tsx bench/webhooks/run.ts [--rounds 8] [--pg postgres://postgres@127.0.0.1:5432/postgres]

import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { createDb } from "@linewatch/db";
import { startLab } from "@linewatch/lab";
import { loadConfig } from "../../apps/control-plane/src/config";
import { silentLogger } from "../../apps/control-plane/src/logger";
import { createSecretBox } from "../../apps/control-plane/src/secrets";
import { serveControlPlane } from "../../apps/control-plane/src/server";
import { benchArgs } from "../args";
import { scratchDatabase } from "../scratch-database";

const args = benchArgs(import.meta.url, { rounds: { type: "string", default: "8" }, pg: { type: "string" } });
const ROUNDS = Number(args.rounds);
const CONDITIONS = ["none", "hung", "failing"] as const;
type Condition = (typeof CONDITIONS)[number];

/** A receiver that hangs (holds every request) or answers 500. */
async function receiver(initial: "hang" | "fail") {
  let mode = initial;
  const held = new Set<ServerResponse>();
  let requests = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests++;
      if (mode === "hang") held.add(res);
      else res.writeHead(500).end("down");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests: () => requests,
    /** End the requests it holds and answer those still queued at the sender (their attempts fail), then hang again. */
    release: async (settled: () => Promise<void>) => {
      mode = "fail";
      for (const res of held) res.destroy();
      held.clear();
      await settled();
      mode = initial;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const res of held) res.destroy();
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

async function main() {
  const scratch = await scratchDatabase({ pgBase: args.pg ?? null, prefix: "bench_webhooks" });
  const database = await createDb(scratch.kind === "postgres" ? { url: scratch.url } : { dataDir: scratch.dataDir });
  const lab = await startLab({ lines: [{ name: "bad", baseLatencyMs: 5 }] });
  const hung = await receiver("hang");
  const failing = await receiver("fail");
  const config = loadConfig({
    PORT: "0",
    LOG_LEVEL: "silent",
    LINEWATCH_SCHEDULER: "false",
    LINEWATCH_SHIPPED_SAMPLES: "false",
    LINEWATCH_BATCH_LINGER_MS: "0",
    LINEWATCH_WEBHOOK_TIMEOUT_MS: "60000",
  });
  const cp = await serveControlPlane({
    config,
    database,
    clock: { now: () => Date.now() },
    logger: silentLogger,
    secrets: createSecretBox("a".repeat(64)),
  });
  const s = cp.services;
  await s.routes.create({ name: "chat", freeShareCap: 0.2, onAllDown: "fail-open" });
  await s.samples.create({
    name: "hello",
    protocol: "openai-chat",
    routes: ["chat"],
    request: { messages: [{ role: "user", content: "hi" }] },
    expect: { minLength: 1 },
    variants: [],
    weight: 1,
  });

  const figures: Record<Condition, { toCooldownMs: number[]; perProbeMs: number[]; probes: number[] }> = {
    none: { toCooldownMs: [], perProbeMs: [], probes: [] },
    hung: { toCooldownMs: [], perProbeMs: [], probes: [] },
    failing: { toCooldownMs: [], perProbeMs: [], probes: [] },
  };
  let run = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order, so a slow spell of the machine does not fall on one condition.
    const order = round % 2 ? [...CONDITIONS].reverse() : [...CONDITIONS];
    for (const condition of order) {
      const line = await s.lines.create({
        name: `bad-${run++}`,
        tier: "paid",
        protocol: "openai-chat",
        baseUrl: lab.baseUrl("bad"),
        model: "m",
        routes: [{ route: "chat", weight: 100 }],
        probeIntervalSec: 45,
        probeBudgetPct: 5,
        adminState: "active",
      } as Parameters<typeof s.lines.create>[0]);
      lab.setMode("bad", "ok");
      for (let i = 0; i < 3; i++) await s.lines.probe(line.id);
      const sinks = [];
      if (condition !== "none") {
        const url = condition === "hung" ? hung.url : failing.url;
        for (let i = 0; i < 4; i++) {
          sinks.push(
            await s.webhooks.create({
              name: `${condition}-${run}-${i}`,
              url,
              events: ["state_change", "table_mode"],
              routes: [],
              format: "json",
              secret: "x".repeat(16),
            }),
          );
        }
        // Something queued for each sink, and (hung) every slot held before the measurement starts.
        await s.lines.update(line.id, { adminState: "drained" });
        await s.lines.update(line.id, { adminState: "active" });
        await cp.engine.webhooks.tick();
      }
      const ticker = condition === "none" ? null : setInterval(() => void cp.engine.webhooks.tick().catch(() => undefined), 200);
      lab.setMode("bad", "errors", { status: 502 });
      const started = performance.now();
      const each: number[] = [];
      for (let i = 0; i < 20; i++) {
        const t = performance.now();
        await s.lines.probe(line.id);
        each.push(performance.now() - t);
        if ((await s.views.health(line.id)).state === "cooldown") break;
      }
      const took = performance.now() - started;
      if (ticker) clearInterval(ticker);
      if ((await s.views.health(line.id)).state !== "cooldown") throw new Error(`${condition}: the line never reached cooldown`);
      figures[condition].toCooldownMs.push(took);
      figures[condition].perProbeMs.push(median(each));
      figures[condition].probes.push(each.length);
      if (condition === "hung" && cp.engine.webhooks.sending === 0) throw new Error("hung: no delivery was held during the measurement");
      for (const sink of sinks) await s.webhooks.remove(sink.id);
      // The next condition starts with every slot free.
      await hung.release(() => cp.engine.webhooks.drain());
      await s.lines.remove(line.id);
    }
  }
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  const base = median(figures.none.toCooldownMs);
  console.log(`webhooks bench: ${ROUNDS} rounds, ${scratch.kind}, load average ${load}`);
  console.log("condition  probes to cooldown  median ms to cooldown  median ms per probe  ratio to none");
  for (const c of CONDITIONS) {
    const f = figures[c];
    console.log(
      `${c.padEnd(9)}  ${String(median(f.probes)).padStart(18)}  ${median(f.toCooldownMs).toFixed(1).padStart(21)}  ${median(f.perProbeMs).toFixed(1).padStart(19)}  ${(median(f.toCooldownMs) / base).toFixed(2).padStart(13)}`,
    );
  }
  console.log(`hung receiver requests: ${hung.requests()}, failing receiver requests: ${failing.requests()}`);
  await hung.close();
  await failing.close();
  await cp.close();
  await database.close();
  await lab.close();
  await scratch.drop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
