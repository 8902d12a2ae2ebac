// One route's table kept current: an ETag long-poll loop against `GET /v1/tables/:route` that keeps
// the last good table through any failure (backoff and a log line, never an empty table).
import { type BackoffPolicy, backoffDelay } from "./backoff";
import type { CacheWriter } from "./cache-writer";
import { errorText, type Logger } from "./logger";
import { parseTable } from "./parse-table";
import { buildSnapshot, type TableSnapshot } from "./snapshot";
import type { Rng, RouteTable } from "./types";

export type TableSource = "control-plane" | "file";

/** What every route's poller (and the route discovery) shares. */
export interface PollContext {
  /** The control plane's base URL, without a trailing slash. */
  base: string;
  token: string | undefined;
  fetch: typeof globalThis.fetch;
  waitSec: number;
  requestTimeoutMs: number;
  minPollIntervalMs: number;
  backoff: BackoffPolicy;
  rng: Rng;
  now: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  logger: Logger;
  cache: CacheWriter;
  onTableChange?: ((route: string, snapshot: TableSnapshot | null, source: TableSource) => void) | undefined;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function requestHeaders(token: string | undefined, snapshot: TableSnapshot | null): Record<string, string> {
  const h: Record<string, string> = { accept: "application/json" };
  if (token) h.authorization = `Bearer ${token}`;
  if (snapshot !== null) h["if-none-match"] = `"${snapshot.version}"`;
  return h;
}

export const requestSignal = (s: AbortSignal, ms: number): AbortSignal => AbortSignal.any([s, AbortSignal.timeout(ms)]);

export class RoutePoller {
  snapshot: TableSnapshot | null = null;
  source: TableSource | null = null;
  /** ms of the last 200 or 304 from the control plane (or as saved in the file). */
  lastPullAt: number | null = null;
  lastError: string | null = null;
  failures = 0;
  /** false once the control plane answered 404 for it. */
  exists = true;
  readonly abort = new AbortController();
  loop: Promise<void> | null = null;
  /** Settles after the first pull (answered or failed). */
  readonly firstAttempt: Promise<void>;
  private settleFirstAttempt: () => void = () => {};

  constructor(
    readonly route: string,
    private readonly ctx: PollContext,
  ) {
    this.firstAttempt = new Promise<void>((resolve) => {
      this.settleFirstAttempt = resolve;
    });
  }

  /** Starts the loop once. */
  start(): void {
    this.loop ??= this.run();
  }

  setTable(table: RouteTable | null, source: TableSource): void {
    const ctx = this.ctx;
    if (table === null) {
      if (this.snapshot === null) return;
      this.snapshot = null;
      this.source = null;
      ctx.onTableChange?.(this.route, null, source);
      ctx.cache.schedule();
      return;
    }
    this.source = source;
    if (this.snapshot !== null && this.snapshot.version === table.version) return;
    this.snapshot = buildSnapshot(table);
    ctx.onTableChange?.(this.route, this.snapshot, source);
    if (source === "control-plane") ctx.cache.schedule();
  }

  private async run(): Promise<void> {
    // The first pull does not hold, so start() learns quickly whether the control plane answers.
    let wait = 0;
    while (!this.abort.signal.aborted) {
      const pause = await this.pullOnce(wait);
      this.settleFirstAttempt();
      wait = this.ctx.waitSec;
      if (pause > 0) await this.ctx.sleep(pause, this.abort.signal);
    }
  }

  /** A 200 or 304: the route exists and the control plane answers. */
  private confirmed(): void {
    this.failures = 0;
    this.lastError = null;
    this.exists = true;
    this.lastPullAt = this.ctx.now();
  }

  /** One pull. Returns how long to pause before the next. */
  private async pullOnce(wait: number): Promise<number> {
    const ctx = this.ctx;
    const started = ctx.now();
    const url = `${ctx.base}/v1/tables/${encodeURIComponent(this.route)}${wait > 0 ? `?waitSec=${wait}` : ""}`;
    const pollPause = () => Math.max(0, ctx.minPollIntervalMs - (ctx.now() - started));
    try {
      const res = await ctx.fetch(url, {
        headers: requestHeaders(ctx.token, this.snapshot),
        signal: requestSignal(this.abort.signal, wait * 1000 + ctx.requestTimeoutMs),
      });
      if (res.status === 304) {
        await res.body?.cancel();
        this.confirmed();
        if (this.source !== "control-plane" && this.snapshot !== null) this.source = "control-plane";
        if ((this.lastPullAt as number) - ctx.cache.lastSavedAt > 60_000) ctx.cache.schedule();
        return pollPause();
      }
      if (res.status === 404) {
        await res.body?.cancel();
        if (this.exists) ctx.logger.warn("router-client: the control plane has no such route", { route: this.route });
        this.exists = false;
        this.setTable(null, "control-plane");
        throw new HttpError(404, "route not found at the control plane");
      }
      if (res.status !== 200) {
        const text = await res.text().catch(() => "");
        throw new HttpError(res.status, `HTTP ${res.status}: ${text.slice(0, 200)}`);
      }
      const parsed = parseTable(await res.json());
      if (!parsed.ok) throw new Error(`invalid table: ${parsed.error}`);
      if (parsed.value.route !== this.route) throw new Error(`invalid table: route ${parsed.value.route} ≠ ${this.route}`);
      const unchanged = this.snapshot?.version === parsed.value.version;
      this.confirmed();
      this.setTable(parsed.value, "control-plane");
      return unchanged ? pollPause() : 0;
    } catch (e) {
      return this.failed(e);
    }
  }

  private failed(e: unknown): number {
    if (this.abort.signal.aborted) return 0;
    const ctx = this.ctx;
    this.failures += 1;
    this.lastError = errorText(e);
    const pause = backoffDelay(ctx.backoff, this.failures, ctx.rng);
    const log = this.failures === 1 || this.failures % 10 === 0 ? ctx.logger.warn : ctx.logger.info;
    log("router-client: table pull failed; keeping the last good table", {
      route: this.route,
      version: this.snapshot?.version ?? null,
      failures: this.failures,
      retryInMs: Math.round(pause),
      error: this.lastError,
    });
    return pause;
  }
}
