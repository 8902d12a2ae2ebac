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
  const fixedRoutes = options.routes?.filter((r) => r !== "") ?? [];
  const now = options.now ?? Date.now;
  const logger = options.logger ?? jsonLineLogger;
  const cacheFile = options.cacheFile ?? null;
  const closing = new AbortController();
  const pollers = new Map<string, RoutePoller>();
  const saved = (): [string, SavedTable][] =>
    [...pollers.values()].flatMap((p) => (p.snapshot === null ? [] : [[p.route, { table: p.snapshot.table, pulledAt: p.lastPullAt }]]));
  const cache = new CacheWriter(cacheFile, saved, now, logger);
  const ctx = pollContext(options, cache, logger, now);
  let started = false;

  const addRoute = (route: string): RoutePoller => {
    let p = pollers.get(route);
    if (p === undefined) {
      p = new RoutePoller(route, ctx);
      pollers.set(route, p);
    }
    if (started) p.start();
    return p;
  };
  const removeRoute = async (route: string): Promise<void> => {
    const p = pollers.get(route);
    if (p === undefined) return;
    pollers.delete(route);
    p.abort.abort();
    if (p.snapshot !== null) {
      p.snapshot = null;
      options.onTableChange?.(route, null, "control-plane");
    }
    await p.loop;
    cache.schedule();
  };
  const discovery =
    fixedRoutes.length === 0
      ? new RouteDiscovery(
          ctx,
          { addRoute, removeRoute, knownRoutes: () => [...pollers.keys()] },
          options.discoveryIntervalMs ?? 30_000,
          closing.signal,
        )
      : null;
  let discoveryLoop: Promise<void> | null = null;
  let listedFromFile = false;

  /** The cache file's tables first: a router that starts while the control plane is down still serves. */
  const loadCacheFile = async (file: string): Promise<void> => {
    try {
      const loaded = await loadTables(file);
      if (loaded === null) return;
      for (const [route, entry] of loaded.tables) {
        if (discovery === null && !fixedRoutes.includes(route)) continue;
        const p = addRoute(route);
        p.lastPullAt = entry.pulledAt;
        p.setTable(entry.table, "file");
        listedFromFile = true;
      }
      logger.info("router-client: loaded tables from the cache file", {
        file,
        savedAt: loaded.savedAt,
        routes: [...loaded.tables.keys()],
        rejected: loaded.rejected,
      });
    } catch (e) {
      logger.error("router-client: could not read the table cache file; starting without it", { file, error: errorText(e) });
    }
  };

  return {
    async start() {
      if (started) throw new Error("router-client: start() called twice");
      if (cacheFile !== null) await loadCacheFile(cacheFile);
      for (const route of fixedRoutes) addRoute(route);
      started = true;
      if (discovery !== null) await discovery.discoverOnce();
      for (const p of pollers.values()) p.start();
      if (discovery !== null) discoveryLoop = discovery.run();
      const timeout = new AbortController();
      await Promise.race([
        Promise.all([...pollers.values()].map((p) => p.firstAttempt)),
        defaultSleep(options.startTimeoutMs ?? 5000, AbortSignal.any([timeout.signal, closing.signal])),
      ]);
      timeout.abort();
    },

    pick(route, pickOptions) {
      const snap = pollers.get(route)?.snapshot;
      if (!snap) return null;
      const picker = pickOptions?.protocol === undefined ? snap.picker : snap.pickerFor(pickOptions.protocol);
      return picker === null ? null : picker.pick(ctx.rng, pickOptions);
    },

    snapshot: (route) => pollers.get(route)?.snapshot ?? undefined,
    routes: () => [...pollers.values()].filter((p) => p.exists).map((p) => p.route),
    version: (route) => pollers.get(route)?.snapshot?.version ?? null,
    lastPullAt: (route) => pollers.get(route)?.lastPullAt ?? null,

    ready() {
      for (const p of pollers.values()) if (p.exists && p.snapshot === null) return false;
      return pollers.size > 0;
    },

    routesKnown: () => discovery === null || discovery.listed || listedFromFile,

    status() {
      return [...pollers.values()].map((p) => ({
        route: p.route,
        version: p.snapshot?.version ?? null,
        mode: p.snapshot?.mode ?? null,
        lines: p.snapshot?.picker.items.length ?? 0,
        source: p.source,
        lastPullAt: p.lastPullAt,
        lastError: p.lastError,
        consecutiveFailures: p.failures,
      }));
    },

    async close() {
      closing.abort();
      for (const p of pollers.values()) p.abort.abort();
      await Promise.all([...pollers.values()].map((p) => p.loop));
      await discoveryLoop;
      await cache.idle();
    },
  };
}
