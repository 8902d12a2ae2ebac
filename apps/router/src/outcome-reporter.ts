// Outcome reports (docs/live-evidence.md): each attempt's outcome is added to the current window of its line
// (a few increments on the hot path); every few seconds the window is closed into a bounded
// backlog and the backlog is pushed to `POST /v1/outcomes`, oldest first. A dead control plane
// costs only the reports that fall off the backlog: recording never waits on the network, and
// (router, window) ids make a retried push count once.
import { emptyCounts, type Logger, type OutcomeReport, type OutcomeReportLine } from "@linewatch/router-client";
import type { AttemptReport } from "./attempt-report";

export interface OutcomeReporterOptions {
  controlPlaneUrl: string;
  token: string | null;
  routerId: string;
  /** ms between pushes; 0: never push on a timer (tests call `flush`/`push`). */
  intervalMs: number;
  /** Closed windows kept while the control plane does not take them; the oldest go first. */
  maxBacklog: number;
  /** ms a push may take. */
  timeoutMs?: number;
  now: () => number;
  logger: Logger;
  fetch?: typeof globalThis.fetch;
}

export type RoleCheck =
  | { ok: true }
  | { ok: false; kind: "forbidden" | "unauthorized"; message: string }
  | { ok: false; kind: "unreachable"; message: string };

export interface ReporterStats {
  backlog: number;
  pushed: number;
  dropped: number;
  failedPushes: number;
}

async function errorMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: { message?: string } };
    return body.error?.message ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

/** Early pushes (on ejection) are at least this far apart: a router ejecting many lines at once pushes once. */
export const EARLY_PUSH_GAP_MS = 1_000;

export class OutcomeReporter {
  private window = new Map<string, OutcomeReportLine & { heldBack: number }>();
  private windowStart: number;
  private seq = 0;
  private readonly backlog: OutcomeReport[] = [];
  private readonly counters = { pushed: 0, dropped: 0, failedPushes: 0 };
  private timer: ReturnType<typeof setInterval> | null = null;
  private pushing: Promise<void> | null = null;
  private lastEarlyPush = Number.NEGATIVE_INFINITY;
  /** Logged once when pushes start failing and once when they work again. */
  private failing = false;
  /** Set when the control plane refuses this router's token for reports (403): the router is misconfigured. */
  roleProblem: string | null = null;
  private readonly fetch: typeof globalThis.fetch;

  constructor(private readonly options: OutcomeReporterOptions) {
    this.windowStart = options.now();
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  private lineOf(lineId: string): OutcomeReportLine & { heldBack: number } {
    let line = this.window.get(lineId);
    if (line === undefined) {
      line = { lineId, counts: emptyCounts(), promptTokens: 0, completionTokens: 0, latencyMsSum: 0, ttfbMsSum: 0, heldBack: 0 };
      this.window.set(lineId, line);
    }
    return line;
  }

  record(lineId: string, r: AttemptReport): void {
    const line = this.lineOf(lineId);
    line.counts[r.outcome] += 1;
    line.promptTokens += r.promptTokens;
    line.completionTokens += r.completionTokens;
    line.latencyMsSum += Math.round(r.latencyMs);
    if (r.ttfbMs !== null) line.ttfbMsSum += Math.round(r.ttfbMs);
  }

  /** A first attempt the table gave the line that went to another line because this router had ejected it. */
  holdBack(lineId: string): void {
    this.lineOf(lineId).heldBack += 1;
  }

  /**
   * Closes the window and pushes it now rather than at the next tick — when the router has just ejected
   * a line, whose failures the control plane should judge at once (docs/router.md#ejection). At most
   * once per `EARLY_PUSH_GAP_MS`, and only while pushing on a timer (tests that flush by hand keep
   * their windows).
   */
  pushSoon(): void {
    if (this.timer === null) return;
    const now = this.options.now();
    if (now - this.lastEarlyPush < EARLY_PUSH_GAP_MS) return;
    this.lastEarlyPush = now;
    this.flush();
    void this.push();
  }

  /** Closes the current window into the backlog (nothing if it saw no traffic). */
  flush(): void {
    const now = this.options.now();
    if (this.window.size > 0) {
      this.backlog.push({
        routerId: this.options.routerId,
        windowId: `${this.windowStart}-${this.seq++}`,
        windowStart: new Date(this.windowStart).toISOString(),
        windowEnd: new Date(now).toISOString(),
        lines: [...this.window.values()],
      });
      this.window = new Map();
      while (this.backlog.length > this.options.maxBacklog) {
        this.backlog.shift();
        this.counters.dropped += 1;
      }
    }
    this.windowStart = now;
  }

  stats(): ReporterStats {
    return { backlog: this.backlog.length, ...this.counters };
  }

  private post(report: OutcomeReport): Promise<Response> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.options.token !== null) headers.authorization = `Bearer ${this.options.token}`;
    return this.fetch(`${this.options.controlPlaneUrl}/v1/outcomes`, {
      method: "POST",
      headers,
      body: JSON.stringify(report),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000),
    });
  }

  /** Pushes the backlog, oldest first, until it is empty or the control plane fails; one push at a time. */
  push(): Promise<void> {
    this.pushing ??= this.pushAll().finally(() => {
      this.pushing = null;
    });
    return this.pushing;
  }

  private async pushAll(): Promise<void> {
    for (let report = this.backlog[0]; report !== undefined; report = this.backlog[0]) {
      let res: Response;
      try {
        res = await this.post(report);
      } catch (error) {
        this.failed(String(error));
        return;
      }
      if (res.ok || res.status === 400 || res.status === 401 || res.status === 403 || res.status === 413) {
        const message = res.ok ? "" : await errorMessage(res);
        if (res.ok) await res.body?.cancel();
        if (res.status === 400 && this.dropUnknownLine(report, message)) continue;
        if (this.backlog[0] === report) this.backlog.shift();
        if (res.ok) {
          this.counters.pushed += 1;
          if (this.failing) this.options.logger.info("router: outcome pushes work again", { backlog: this.backlog.length });
          this.failing = false;
          this.roleProblem = null;
        } else {
          // The control plane will never take this report: keeping it would block the ones behind it.
          this.counters.dropped += 1;
          if (res.status === 403) this.roleProblem = `the control plane refuses this router's reports: ${message}`;
          this.options.logger.warn("router: outcome report refused; dropped", { status: res.status, message });
        }
        continue;
      }
      await res.body?.cancel();
      this.failed(`HTTP ${res.status}`);
      return; // 5xx, 429: the control plane is in trouble; try again next time
    }
  }

  private failed(error: string): void {
    this.counters.failedPushes += 1;
    if (this.failing) return;
    this.failing = true;
    this.options.logger.warn("router: outcome push failed; reports wait in the backlog (bounded)", {
      error,
      backlog: this.backlog.length,
      maxBacklog: this.options.maxBacklog,
    });
  }

  /** A line deleted since the table was pulled makes the report a 400 naming it: push the rest. */
  private dropUnknownLine(report: OutcomeReport, message: string): boolean {
    const m = /^lines\.(\d+)\.lineId: no line /.exec(message);
    if (m === null) return false;
    report.lines.splice(Number(m[1]), 1);
    if (report.lines.length === 0) {
      this.backlog.shift();
      this.counters.dropped += 1;
    }
    return true;
  }

  /**
   * Whether the control plane takes this router's token for reports (an empty report: nothing is
   * stored). 403: the token is not a router token; 401: missing, unknown or revoked.
   */
  async checkRole(): Promise<RoleCheck> {
    const now = this.options.now();
    let res: Response;
    try {
      res = await this.post({
        routerId: this.options.routerId,
        windowId: `role-check-${now}`,
        windowStart: new Date(now).toISOString(),
        windowEnd: new Date(now).toISOString(),
        lines: [],
      });
    } catch (error) {
      return { ok: false, kind: "unreachable", message: String(error) };
    }
    if (res.ok) {
      await res.body?.cancel();
      return { ok: true };
    }
    const message = await errorMessage(res);
    if (res.status === 403) {
      this.roleProblem = message;
      return { ok: false, kind: "forbidden", message };
    }
    if (res.status === 401) return { ok: false, kind: "unauthorized", message };
    return { ok: false, kind: "unreachable", message: `HTTP ${res.status}: ${message}` };
  }

  start(): void {
    if (this.options.intervalMs <= 0 || this.timer !== null) return;
    this.timer = setInterval(() => {
      this.flush();
      void this.push();
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and makes one last push of what is left (bounded by the push timeout). */
  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.flush();
    await this.push();
  }
}
