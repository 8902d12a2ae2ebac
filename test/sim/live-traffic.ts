// Live traffic on a virtual clock (docs/live-evidence.md): routers pick lines by the table with the real
// picker, ejection, retry budget and held-back count of packages/router-client, add each answer to a
// report window, and every report is judged the way the control plane judges it (core's summarizeLive
// and liveVerdict). Answers take no time. What each line answers is a function of chance and time.
import { EARLY_PUSH_GAP_MS } from "../../apps/router/src/outcome-reporter";
import {
  DEFAULT_HEALTH_POLICY,
  DEFAULT_LIVE_VERDICT,
  emptyCounts,
  type LiveOutcome,
  type LiveVerdict,
  type LiveVerdictPolicy,
  type LiveWindow,
  liveVerdict,
  mulberry32,
  summarizeLive,
} from "../../packages/core/src/index";
import {
  createWeightedPicker,
  DEFAULT_EJECTOR,
  DEFAULT_RETRY_BUDGET,
  LineEjector,
  pickPastEjected,
  RetryBudget,
} from "../../packages/router-client/src/index";

export interface LiveSimLine {
  id: string;
  weight: number;
  /** The outcome of one answer at `at` (ms). */
  answer(rng: () => number, at: number): LiveOutcome;
}

export interface LiveSimOptions {
  lines: LiveSimLine[];
  /** Client requests per second, over all routers. */
  ratePerSec: number;
  routers: number;
  /** ms */
  start: number;
  end: number;
  seed: number;
  reportIntervalMs?: number;
  ejectAfterFailures?: number;
  policy?: LiveVerdictPolicy;
  /** Judge only these lines (default: every line); judging is most of the cost. */
  judge?: string[];
}

export interface LiveJudgment {
  at: number;
  lineId: string;
  verdict: LiveVerdict;
}

/** `p` of the answers fail with `outcome`, independently. */
export const randomFailures =
  (p: number, outcome: LiveOutcome = "http_5xx") =>
  (rng: () => number): LiveOutcome =>
    rng() < p ? outcome : "ok";

/** ms to the next request of a Poisson stream. */
const gap = (rng: () => number, ratePerSec: number) => (-Math.log(1 - rng()) / ratePerSec) * 1000;

class SimRouter {
  readonly ejector: LineEjector;
  readonly budget = new RetryBudget(DEFAULT_RETRY_BUDGET);
  window = new Map<string, LiveWindow>();
  windowStart: number;
  lastEarlyPush = Number.NEGATIVE_INFINITY;
  constructor(
    readonly id: string,
    start: number,
    failures: number,
  ) {
    this.ejector = new LineEjector({ ...DEFAULT_EJECTOR, failures });
    this.windowStart = start;
  }

  lineWindow(lineId: string): LiveWindow {
    let w = this.window.get(lineId);
    if (w === undefined) {
      w = { routerId: this.id, start: this.windowStart, end: 0, counts: emptyCounts(), promptTokens: 0, completionTokens: 0, heldBack: 0 };
      this.window.set(lineId, w);
    }
    return w;
  }
}

/** Runs the traffic; calls `onJudgment` for every judgment of every reported line, in time order. */
export function simulateLive(opts: LiveSimOptions, onJudgment: (j: LiveJudgment) => void): void {
  const rng = mulberry32(opts.seed);
  const picker = createWeightedPicker(opts.lines);
  const byId = new Map(opts.lines.map((l) => [l.id, l]));
  const interval = opts.reportIntervalMs ?? 5_000;
  const policy = opts.policy ?? DEFAULT_LIVE_VERDICT;
  const judged = new Set(opts.judge ?? opts.lines.map((l) => l.id));
  const routers = Array.from(
    { length: opts.routers },
    (_, i) => new SimRouter(`r${i + 1}`, opts.start, opts.ejectAfterFailures ?? DEFAULT_EJECTOR.failures),
  );
  // The control plane's store: each line's windows of the last recent + baseline span.
  const keepMs = 120_000 + 3_600_000 + 2 * interval;
  const stored = new Map<string, LiveWindow[]>();
  // Each router reports on its own phase, as independent processes do.
  const nextReport = routers.map((_, i) => opts.start + interval * ((i + 1) / routers.length));

  const attempt = (r: SimRouter, line: LiveSimLine, at: number): boolean => {
    const outcome = line.answer(rng, at);
    const failed = outcome !== "ok" && outcome !== "http_4xx";
    const ejected = r.ejector.observe(line.id, failed, at);
    r.lineWindow(line.id).counts[outcome] += 1;
    // The router pushes at once when it ejects a line (at most once a second): outcome-reporter.ts.
    if (ejected && at - r.lastEarlyPush >= EARLY_PUSH_GAP_MS) {
      r.lastEarlyPush = at;
      report(r, at);
    }
    return failed;
  };

  const report = (r: SimRouter, at: number) => {
    for (const [lineId, w] of r.window) {
      w.end = at;
      if (!judged.has(lineId)) continue;
      let list = stored.get(lineId);
      if (list === undefined) {
        list = [];
        stored.set(lineId, list);
      }
      list.push(w);
      let drop = 0;
      while (drop < list.length && (list[drop] as LiveWindow).end < at - keepMs) drop++;
      if (drop > 0) list.splice(0, drop);
      onJudgment({ at, lineId, verdict: liveVerdict(summarizeLive(list, at), policy) });
    }
    r.window = new Map();
    r.windowStart = at;
  };

  let t = opts.start + gap(rng, opts.ratePerSec);
  while (t < opts.end) {
    for (let i = 0; i < routers.length; i++) {
      while ((nextReport[i] as number) <= t) {
        report(routers[i] as SimRouter, nextReport[i] as number);
        nextReport[i] = (nextReport[i] as number) + interval;
      }
    }
    const r = routers[Math.floor(rng() * routers.length)] as SimRouter;
    r.budget.request(t);
    const pick = pickPastEjected(picker, r.ejector.ejected(t), rng, undefined);
    if (pick !== null) {
      if (pick.heldBackFrom !== null) r.lineWindow(pick.heldBackFrom.id).heldBack += 1;
      const first = byId.get(pick.line.id) as LiveSimLine;
      if (attempt(r, first, t) && picker.items.length > 1 && r.budget.tryRetry(t)) {
        const second = picker.pick(rng, { exclude: [first.id] });
        if (second !== null) attempt(r, byId.get(second.id) as LiveSimLine, t);
      }
    }
    t += gap(rng, opts.ratePerSec);
  }
}

/**
 * When live evidence alone would take the line to cooldown: the first judgment of a run of suspect
 * judgments that has lasted `liveConfirmMs` (docs/live-evidence.md#into-health), or null.
 */
export function liveCooldownAt(judgments: LiveJudgment[], lineId: string, confirmMs = DEFAULT_HEALTH_POLICY.liveConfirmMs): number | null {
  let since: number | null = null;
  for (const j of judgments) {
    if (j.lineId !== lineId) continue;
    if (!j.verdict.suspect) {
      since = null;
      continue;
    }
    since ??= j.at;
    if (j.at - since >= confirmMs) return j.at;
  }
  return null;
}
