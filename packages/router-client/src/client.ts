// The router-client: every route's table kept current (route-poller.ts), the route list discovered
// when none is configured (route-discovery.ts), the last good tables on disk (cache-writer.ts), and a
// weighted pick per request (snapshot.ts). A control-plane outage never takes a table away.
import { setTimeout as delay } from "node:timers/promises";
import { type BackoffPolicy, DEFAULT_BACKOFF } from "./backoff";
import { CacheWriter } from "./cache-writer";
import { errorText, jsonLineLogger, type Logger } from "./logger";
import { RouteDiscovery } from "./route-discovery";
import { type PollContext, RoutePoller, type TableSource } from "./route-poller";
import type { TableSnapshot } from "./snapshot";
import { loadTables, type SavedTable } from "./table-file";
import type { Rng, TableLine, TableMode } from "./types";
import type { PickOptions } from "./weighted-picker";

export type { TableSource } from "./route-poller";

export interface RouteStatus {
  route: string;
  version: number | null;
  mode: TableMode | null;
  /** Lines with weight > 0. */
  lines: number;
  source: TableSource | null;
  /** ms since epoch of the last 200 or 304 from the control plane (or as saved in the file). */
  lastPullAt: number | null;
  lastError: string | null;
  consecutiveFailures: number;
}

export interface RouterClientOptions {
  /** Control-plane base URL, e.g. http://127.0.0.1:8787 */
  controlPlaneUrl: string;
  /** A router-scoped token, so lines carry `apiKey` and `headers`. */
  token?: string | undefined;
  /** Routes to keep. Empty or absent: every route of `GET /v1/tables`, re-listed every `discoveryIntervalMs`. */
  routes?: ReadonlyArray<string> | undefined;
  /** Where the last good tables are kept; null: memory only. */
  cacheFile?: string | null | undefined;
  /** Long-poll hold, seconds (1–60). Default 30. */
  waitSec?: number | undefined;
  /** Timeout of a request beyond its long-poll hold. Default 10 s. */
  requestTimeoutMs?: number | undefined;
  /** A poll answered 304 sooner than this is followed by a pause, so a server that does not hold can't make a hot loop. Default 1 s. */
  minPollIntervalMs?: number | undefined;
  discoveryIntervalMs?: number | undefined;
  /** `start()` resolves after the first pull of every route or after this long. Default 5 s. */
  startTimeoutMs?: number | undefined;
  backoff?: Partial<BackoffPolicy> | undefined;
  /** Used for picks and backoff jitter. Default Math.random. */
  rng?: Rng | undefined;
  now?: (() => number) | undefined;
  fetch?: typeof globalThis.fetch | undefined;
  /** Resolves after `ms` or when `signal` aborts (never rejects). */
  sleep?: ((ms: number, signal: AbortSignal) => Promise<void>) | undefined;
  logger?: Logger | undefined;
  /** Called when a route's table changes version, appears or goes away. */
  onTableChange?: ((route: string, snapshot: TableSnapshot | null, source: TableSource) => void) | undefined;
}

/** A pick, optionally among the lines of one protocol only (docs/router.md). */
export interface ClientPickOptions extends PickOptions {
  protocol?: string | undefined;
}

export interface RouterClient {
  /** Loads the cache file, then starts pulling; resolves once every route had a first answer (or `startTimeoutMs`). */
  start(): Promise<void>;
  /** A line of `route` by weight (or by affinity key); null when the route has no table or no line with weight (of that protocol). */
  pick(route: string, options?: ClientPickOptions): TableLine | null;
  snapshot(route: string): TableSnapshot | undefined;
  /** Routes this client serves: the configured ones (less those the control plane says don't exist) or the discovered ones. */
  routes(): string[];
  version(route: string): number | null;
  lastPullAt(route: string): number | null;
  /** Every route has a table. */
  ready(): boolean;
  /**
   * The route list is known: routes were configured, or the control plane listed them once, or
   * the cache file held some. Until then an unknown name may still be a route.
   */
  routesKnown(): boolean;
  status(): RouteStatus[];
  /** Aborts the long-polls and waits for the loops and a pending file write. */
  close(): Promise<void>;
}

const defaultSleep = async (ms: number, signal: AbortSignal): Promise<void> => {
  if (signal.aborted) return;
  await delay(ms, undefined, { signal }).catch((e: unknown) => {
    if ((e as Error).name !== "AbortError") throw e;
  });
};

function pollContext(options: RouterClientOptions, cache: CacheWriter, logger: Logger, now: () => number): PollContext {
  return {
    base: options.controlPlaneUrl.replace(/\/+$/, ""),
    token: options.token,
    fetch: options.fetch ?? globalThis.fetch,
    waitSec: Math.max(1, Math.min(60, Math.floor(options.waitSec ?? 30))),
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    minPollIntervalMs: options.minPollIntervalMs ?? 1000,
    backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
    rng: options.rng ?? Math.random,
    now,
    sleep: options.sleep ?? defaultSleep,
    logger,
    cache,
    onTableChange: options.onTableChange,
  };
}

export function createRouterClient(options: RouterClientOptions): RouterClient {
  return new PollingRouterClient(options);
}

class PollingRouterClient implements RouterClient {
  private readonly fixedRoutes: string[];
  private readonly logger: Logger;
  private readonly cacheFile: string | null;
  private readonly closing = new AbortController();
  private readonly pollers = new Map<string, RoutePoller>();
  private readonly cache: CacheWriter;
  private readonly ctx: PollContext;
  private readonly discovery: RouteDiscovery | null;
  private discoveryLoop: Promise<void> | null = null;
  private started = false;
  private listedFromFile = false;

  constructor(private readonly options: RouterClientOptions) {
    this.fixedRoutes = options.routes?.filter((r) => r !== "") ?? [];
    const now = options.now ?? Date.now;
    this.logger = options.logger ?? jsonLineLogger;
    this.cacheFile = options.cacheFile ?? null;
    this.cache = new CacheWriter(this.cacheFile, () => this.savedTables(), now, this.logger);
    this.ctx = pollContext(options, this.cache, this.logger, now);
    const host = {
      addRoute: (r: string) => this.addRoute(r),
      removeRoute: (r: string) => this.removeRoute(r),
      knownRoutes: () => [...this.pollers.keys()],
    };
    this.discovery =
      this.fixedRoutes.length === 0 ? new RouteDiscovery(this.ctx, host, options.discoveryIntervalMs ?? 30_000, this.closing.signal) : null;
  }

  private savedTables(): [string, SavedTable][] {
    return [...this.pollers.values()].flatMap((p) =>
      p.snapshot === null ? [] : [[p.route, { table: p.snapshot.table, pulledAt: p.lastPullAt }]],
    );
  }

  private addRoute(route: string): RoutePoller {
    let p = this.pollers.get(route);
    if (p === undefined) {
      p = new RoutePoller(route, this.ctx);
      this.pollers.set(route, p);
    }
    if (this.started) p.start();
    return p;
  }

  private async removeRoute(route: string): Promise<void> {
    const p = this.pollers.get(route);
    if (p === undefined) return;
    this.pollers.delete(route);
    p.abort.abort();
    if (p.snapshot !== null) {
      p.snapshot = null;
      this.options.onTableChange?.(route, null, "control-plane");
    }
    await p.loop;
    this.cache.schedule();
  }

  /** The cache file's tables first: a router that starts while the control plane is down still serves. */
  private async loadCacheFile(file: string): Promise<void> {
    try {
      const loaded = await loadTables(file);
      if (loaded === null) return;
      for (const [route, entry] of loaded.tables) {
        if (this.discovery === null && !this.fixedRoutes.includes(route)) continue;
        const p = this.addRoute(route);
        p.lastPullAt = entry.pulledAt;
        p.setTable(entry.table, "file");
        this.listedFromFile = true;
      }
      this.logger.info("router-client: loaded tables from the cache file", {
        file,
        savedAt: loaded.savedAt,
        routes: [...loaded.tables.keys()],
        rejected: loaded.rejected,
      });
    } catch (e) {
      this.logger.error("router-client: could not read the table cache file; starting without it", { file, error: errorText(e) });
    }
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("router-client: start() called twice");
    if (this.cacheFile !== null) await this.loadCacheFile(this.cacheFile);
    for (const route of this.fixedRoutes) this.addRoute(route);
    this.started = true;
    if (this.discovery !== null) await this.discovery.discoverOnce();
    for (const p of this.pollers.values()) p.start();
    if (this.discovery !== null) this.discoveryLoop = this.discovery.run();
    const timeout = new AbortController();
    await Promise.race([
      Promise.all([...this.pollers.values()].map((p) => p.firstAttempt)),
      defaultSleep(this.options.startTimeoutMs ?? 5000, AbortSignal.any([timeout.signal, this.closing.signal])),
    ]);
    timeout.abort();
  }

  pick(route: string, pickOptions?: ClientPickOptions): TableLine | null {
    const snap = this.pollers.get(route)?.snapshot;
    if (!snap) return null;
    const picker = pickOptions?.protocol === undefined ? snap.picker : snap.pickerFor(pickOptions.protocol);
    return picker === null ? null : picker.pick(this.ctx.rng, pickOptions);
  }

  snapshot(route: string): TableSnapshot | undefined {
    return this.pollers.get(route)?.snapshot ?? undefined;
  }

  routes(): string[] {
    return [...this.pollers.values()].filter((p) => p.exists).map((p) => p.route);
  }

  version(route: string): number | null {
    return this.pollers.get(route)?.snapshot?.version ?? null;
  }

  lastPullAt(route: string): number | null {
    return this.pollers.get(route)?.lastPullAt ?? null;
  }

  ready(): boolean {
    for (const p of this.pollers.values()) if (p.exists && p.snapshot === null) return false;
    return this.pollers.size > 0;
  }

  routesKnown(): boolean {
    return this.discovery === null || this.discovery.listed || this.listedFromFile;
  }

  status(): RouteStatus[] {
    return [...this.pollers.values()].map((p) => ({
      route: p.route,
      version: p.snapshot?.version ?? null,
      mode: p.snapshot?.mode ?? null,
      lines: p.snapshot?.picker.items.length ?? 0,
      source: p.source,
      lastPullAt: p.lastPullAt,
      lastError: p.lastError,
      consecutiveFailures: p.failures,
    }));
  }

  async close(): Promise<void> {
    this.closing.abort();
    for (const p of this.pollers.values()) p.abort.abort();
    await Promise.all([...this.pollers.values()].map((p) => p.loop));
    await this.discoveryLoop;
    await this.cache.idle();
  }
}
