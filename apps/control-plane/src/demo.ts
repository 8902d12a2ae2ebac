import { DEFAULT_ROUTE_SETTINGS, type Tier } from "@linewatch/core";
import { type Lab, type LabMode, startLab } from "@linewatch/lab";
import type { AppDeps } from "./deps";
import type { Services } from "./services/index";

export const DEMO_ROUTE = "chat-default";
const DEMO_LINES: { name: string; tier: Tier; weight: number; baseLatencyMs: number; latencyJitterMs: number }[] = [
  { name: "paid-a", tier: "paid", weight: 60, baseLatencyMs: 220, latencyJitterMs: 120 },
  { name: "paid-b", tier: "paid", weight: 40, baseLatencyMs: 300, latencyJitterMs: 150 },
  { name: "free-a", tier: "free", weight: 50, baseLatencyMs: 450, latencyJitterMs: 300 },
  { name: "free-b", tier: "free", weight: 50, baseLatencyMs: 400, latencyJitterMs: 250 },
];

/** What the degrading free line does, minute by minute, in a 30-minute loop. */
const SCRIPT: { atMin: number; mode: LabMode; note: string }[] = [
  { atMin: 0, mode: "ok", note: "free-b answers well" },
  { atMin: 2, mode: "truncate", note: "free-b starts truncating its answers (HTTP 200, text cut short)" },
  { atMin: 5, mode: "stale", note: "free-b now replays a cached old answer (nonce not echoed)" },
  { atMin: 8, mode: "ok", note: "free-b recovers: watch cooldown end, then probation 20% → 50% → 100%" },
];
const LOOP_MIN = 30;

export interface Demo {
  lab: Lab;
  stop(): Promise<void>;
}

/**
 * `npm start`: four simulated lines (two paid, two free) on one route, registered and probed every
 * 15 s, with free-b going bad after two minutes so a newcomer sees scores, states and tables move.
 */
export async function startDemo(
  deps: Pick<AppDeps, "clock" | "logger">,
  services: Pick<Services, "lines" | "routes">,
  port = 8790,
): Promise<Demo> {
  const lines = DEMO_LINES.map(({ name, baseLatencyMs, latencyJitterMs }) => ({ name, baseLatencyMs, latencyJitterMs }));
  const lab = await startLab({ port, lines }).catch(() => startLab({ lines }));
  await registerDemoLines(services, lab);
  const started = deps.clock.now();
  let current = -1;
  const step = () => {
    const minute = ((deps.clock.now() - started) / 60_000) % LOOP_MIN;
    const index = SCRIPT.reduce((at, s, i) => (minute >= s.atMin ? i : at), 0);
    if (index === current) return;
    current = index;
    const s = SCRIPT[index];
    if (!s) throw new Error(`demo: no script step ${index} (the index comes from SCRIPT itself)`);
    lab.setMode("free-b", s.mode);
    deps.logger.info(`demo: ${s.note}`, { line: "free-b", mode: s.mode });
  };
  step();
  const timer = setInterval(step, 5_000);
  timer.unref();
  return {
    lab,
    stop: async () => {
      clearInterval(timer);
      await lab.close();
    },
  };
}

/** The route and its four lines, through the services like any registration; a restart points them at this run's lab. */
async function registerDemoLines({ lines, routes }: Pick<Services, "lines" | "routes">, lab: Lab): Promise<void> {
  if (!(await routes.list()).some((r) => r.name === DEMO_ROUTE)) await routes.create({ name: DEMO_ROUTE, ...DEFAULT_ROUTE_SETTINGS });
  const existing = new Map((await lines.list()).map((l) => [l.name, l.id]));
  for (const l of DEMO_LINES) {
    const fields = { baseUrl: lab.baseUrl(l.name), model: "lab-model", probeIntervalSec: 15 };
    const id = existing.get(l.name);
    if (id) await lines.update(id, fields);
    else {
      await lines.create({
        ...fields,
        name: l.name,
        tier: l.tier,
        protocol: "openai-chat",
        routes: [{ route: DEMO_ROUTE, weight: l.weight }],
        probeBudgetPct: 5,
        adminState: "active",
      });
    }
  }
}
