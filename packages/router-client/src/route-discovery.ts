// Without configured routes, the client serves every route the control plane lists: `GET /v1/tables`
// now and every `discoveryIntervalMs`, adding routes that appear and dropping those that go.
import { backoffDelay } from "./backoff";
import { errorText } from "./logger";
import { parseTable } from "./parse-table";
import { HttpError, type PollContext, type RoutePoller, requestHeaders, requestSignal } from "./route-poller";

export interface DiscoveryHost {
  /** The poller of a route, made (and started, once the client runs) if new. */
  addRoute(route: string): RoutePoller;
  removeRoute(route: string): Promise<void>;
  knownRoutes(): string[];
}

export class RouteDiscovery {
  private failures = 0;
  /** The control plane listed the routes once (or the cache file had some). */
  listed = false;

  constructor(
    private readonly ctx: PollContext,
    private readonly host: DiscoveryHost,
    private readonly intervalMs: number,
    private readonly closing: AbortSignal,
  ) {}

  /** One listing; false when it failed (the known routes stay as they are). */
  async discoverOnce(): Promise<boolean> {
    const ctx = this.ctx;
    try {
      const res = await ctx.fetch(`${ctx.base}/v1/tables`, {
        headers: requestHeaders(ctx.token, null),
        signal: requestSignal(this.closing, ctx.requestTimeoutMs),
      });
      if (res.status !== 200) {
        const text = await res.text().catch(() => "");
        throw new HttpError(res.status, `HTTP ${res.status}: ${text.slice(0, 200)}`);
      }
      const body = (await res.json()) as { tables?: unknown };
      if (!Array.isArray(body.tables)) throw new Error("invalid table list: tables is not an array");
      const seen = new Set<string>();
      for (const t of body.tables) {
        const parsed = parseTable(t);
        if (!parsed.ok) {
          ctx.logger.warn("router-client: skipping an invalid table in the list", { error: parsed.error });
          continue;
        }
        const table = parsed.value;
        seen.add(table.route);
        const s = this.host.addRoute(table.route);
        // The per-route long-poll is authoritative; the list only fills in or moves forward.
        if (s.snapshot === null || table.version > s.snapshot.version) {
          s.lastPullAt = ctx.now();
          s.setTable(table, "control-plane");
        }
      }
      for (const route of this.host.knownRoutes()) if (!seen.has(route)) await this.host.removeRoute(route);
      this.failures = 0;
      this.listed = true;
      return true;
    } catch (e) {
      if (this.closing.aborted) return false;
      this.failures += 1;
      const log = this.failures === 1 || this.failures % 10 === 0 ? ctx.logger.warn : ctx.logger.info;
      log("router-client: listing tables failed; keeping the known routes", { failures: this.failures, error: errorText(e) });
      return false;
    }
  }

  /** Lists again every interval (sooner, with backoff, after a failure) until the client closes. */
  async run(): Promise<void> {
    while (!this.closing.aborted) {
      const pause = this.failures > 0 ? backoffDelay(this.ctx.backoff, this.failures, this.ctx.rng) : this.intervalMs;
      await this.ctx.sleep(Math.min(pause, this.intervalMs), this.closing);
      if (this.closing.aborted) break;
      await this.discoverOnce();
    }
  }
}
