import { setTimeout as delay } from "node:timers/promises";
import { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from "./backoff";
import { parseTable } from "./parse-table";
import { loadTables, type SavedTable, saveTables } from "./table-file";
import type { Rng, RouteTable, TableLine, TableMode } from "./types";
import { createWeightedPicker, type PickOptions, type WeightedPicker } from "./weighted-picker";

/** One route's table at one version, with its picker built once. */
export interface TableSnapshot {
  readonly route: string;
  readonly version: number;
  readonly mode: TableMode;
  readonly table: RouteTable;
  readonly picker: WeightedPicker<TableLine>;
}

export type TableSource = "control-plane" | "file";

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

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
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

export interface RouterClient {
  /** Loads the cache file, then starts pulling; resolves once every route had a first answer (or `startTimeoutMs`). */
  start(): Promise<void>;
  /** A line of `route` by weight (or by affinity key); null when the route has no table or no line with weight. */
  pick(route: string, options?: PickOptions): TableLine | null;
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

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

export const jsonLineLogger: Logger = {
  info: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: "info", msg, ...fields })}\n`),
  warn: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: "warn", msg, ...fields })}\n`),
  error: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: "error", msg, ...fields })}\n`),
};

const defaultSleep = async (ms: number, signal: AbortSignal): Promise<void> => {
  if (signal.aborted) return;
  await delay(ms, undefined, { signal }).catch((e: unknown) => {
    if ((e as Error).name !== "AbortError") throw e;
  });
};

export function buildSnapshot(table: RouteTable): TableSnapshot {
  return {
    route: table.route,
    version: table.version,
    mode: table.mode,
    table,
    picker: createWeightedPicker(table.lines),
  };
}

interface RouteState {
  route: string;
  snapshot: TableSnapshot | null;
  source: TableSource | null;
  lastPullAt: number | null;
  lastError: string | null;
  failures: number;
  /** false once the control plane answered 404 for it. */
  exists: boolean;
  abort: AbortController;
  loop: Promise<void> | null;
  firstAttempt: Promise<void>;
  settleFirstAttempt: () => void;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const errorText = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  return cause instanceof Error ? `${e.message}: ${cause.message}` : e.message;
};

export function createRouterClient(options: RouterClientOptions): RouterClient {
  const base = options.controlPlaneUrl.replace(/\/+$/, "");
  const fixedRoutes = options.routes?.filter((r) => r !== "") ?? [];
  const discovery = fixedRoutes.length === 0;
  const waitSec = Math.max(1, Math.min(60, Math.floor(options.waitSec ?? 30)));
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const minPollIntervalMs = options.minPollIntervalMs ?? 1000;
  const discoveryIntervalMs = options.discoveryIntervalMs ?? 30_000;
  const startTimeoutMs = options.startTimeoutMs ?? 5000;
  const backoff: BackoffPolicy = { ...DEFAULT_BACKOFF, ...options.backoff };
  const rng = options.rng ?? Math.random;
  const now = options.now ?? Date.now;
  const doFetch = options.fetch ?? globalThis.fetch;
  const sleep = options.sleep ?? defaultSleep;
  const logger = options.logger ?? jsonLineLogger;
  const cacheFile = options.cacheFile ?? null;

  const closing = new AbortController();
  const states = new Map<string, RouteState>();
  let started = false;
  let discoveryLoop: Promise<void> | null = null;
  let discoveryFailures = 0;
  let listed = !discovery;

  // ---- persistence: one write at a time, the latest state wins --------------------------
  let saveDirty = false;
  let saving: Promise<void> | null = null;
  let lastSavedAt = 0;
  const runSaves = async (): Promise<void> => {
    while (saveDirty && cacheFile !== null) {
      saveDirty = false;
      const entries: [string, SavedTable][] = [];
      for (const s of states.values()) {
        if (s.snapshot !== null) entries.push([s.route, { table: s.snapshot.table, pulledAt: s.lastPullAt }]);
      }
      lastSavedAt = now();
      try {
        await saveTables(cacheFile, entries, lastSavedAt);
      } catch (e) {
        logger.error("router-client: could not write the table cache file", { file: cacheFile, error: errorText(e) });
      }
    }
    saving = null;
  };
  const scheduleSave = (): void => {
    if (cacheFile === null) return;
    saveDirty = true;
    saving ??= runSaves();
  };

  // ---- route state -------------------------------------------------------------------
  const newState = (route: string): RouteState => {
    let settle = (): void => {};
    const firstAttempt = new Promise<void>((resolve) => {
      settle = resolve;
    });
    return {
      route,
      snapshot: null,
      source: null,
      lastPullAt: null,
      lastError: null,
      failures: 0,
      exists: true,
      abort: new AbortController(),
      loop: null,
      firstAttempt,
      settleFirstAttempt: settle,
    };
  };

  const setTable = (s: RouteState, table: RouteTable | null, source: TableSource): void => {
    if (table === null) {
      if (s.snapshot === null) return;
      s.snapshot = null;
      s.source = null;
      options.onTableChange?.(s.route, null, source);
      scheduleSave();
      return;
    }
    s.source = source;
    if (s.snapshot !== null && s.snapshot.version === table.version) return;
    s.snapshot = buildSnapshot(table);
    options.onTableChange?.(s.route, s.snapshot, source);
    if (source === "control-plane") scheduleSave();
  };

  const headers = (snapshot: TableSnapshot | null): Record<string, string> => {
    const h: Record<string, string> = { accept: "application/json" };
    if (options.token) h.authorization = `Bearer ${options.token}`;
    if (snapshot !== null) h["if-none-match"] = `"${snapshot.version}"`;
    return h;
  };

  const requestSignal = (s: AbortSignal, ms: number): AbortSignal => AbortSignal.any([s, AbortSignal.timeout(ms)]);

  /** One pull of one route. Returns how long to pause before the next. */
  const pullOnce = async (s: RouteState, wait: number): Promise<number> => {
    const started = now();
    const url = `${base}/v1/tables/${encodeURIComponent(s.route)}${wait > 0 ? `?waitSec=${wait}` : ""}`;
    try {
      const res = await doFetch(url, {
        headers: headers(s.snapshot),
        signal: requestSignal(s.abort.signal, wait * 1000 + requestTimeoutMs),
      });
      if (res.status === 304) {
        await res.body?.cancel();
        s.failures = 0;
        s.lastError = null;
        s.exists = true;
        s.lastPullAt = now();
        if (s.source !== "control-plane" && s.snapshot !== null) s.source = "control-plane";
        if (s.lastPullAt - lastSavedAt > 60_000) scheduleSave();
        return Math.max(0, minPollIntervalMs - (now() - started));
      }
      if (res.status === 404) {
        await res.body?.cancel();
        if (s.exists) logger.warn("router-client: the control plane has no such route", { route: s.route });
        s.exists = false;
        setTable(s, null, "control-plane");
        throw new HttpError(404, "route not found at the control plane");
      }
      if (res.status !== 200) {
        const text = await res.text().catch(() => "");
        throw new HttpError(res.status, `HTTP ${res.status}: ${text.slice(0, 200)}`);
      }
      const parsed = parseTable(await res.json());
      if (!parsed.ok) throw new Error(`invalid table: ${parsed.error}`);
      if (parsed.value.route !== s.route) throw new Error(`invalid table: route ${parsed.value.route} ≠ ${s.route}`);
      const unchanged = s.snapshot?.version === parsed.value.version;
      s.failures = 0;
      s.lastError = null;
      s.exists = true;
      s.lastPullAt = now();
      setTable(s, parsed.value, "control-plane");
      return unchanged ? Math.max(0, minPollIntervalMs - (now() - started)) : 0;
    } catch (e) {
      if (s.abort.signal.aborted) return 0;
      s.failures += 1;
      s.lastError = errorText(e);
      const pause = backoffDelay(backoff, s.failures, rng);
      const log = s.failures === 1 || s.failures % 10 === 0 ? logger.warn : logger.info;
      log("router-client: table pull failed; keeping the last good table", {
        route: s.route,
        version: s.snapshot?.version ?? null,
        failures: s.failures,
        retryInMs: Math.round(pause),
        error: s.lastError,
      });
      return pause;
    }
  };

  const runLoop = async (s: RouteState): Promise<void> => {
    // The first pull does not hold, so start() learns quickly whether the control plane answers.
    let wait = 0;
    while (!s.abort.signal.aborted) {
      const pause = await pullOnce(s, wait);
      s.settleFirstAttempt();
      wait = waitSec;
      if (pause > 0) await sleep(pause, s.abort.signal);
    }
  };

  const addRoute = (route: string): RouteState => {
    let s = states.get(route);
    if (s === undefined) {
      s = newState(route);
      states.set(route, s);
    }
    if (started && s.loop === null) s.loop = runLoop(s);
    return s;
  };

  const removeRoute = async (route: string): Promise<void> => {
    const s = states.get(route);
    if (s === undefined) return;
    states.delete(route);
    s.abort.abort();
    if (s.snapshot !== null) {
      s.snapshot = null;
      options.onTableChange?.(route, null, "control-plane");
    }
    await s.loop;
    scheduleSave();
  };

  // ---- discovery (no configured routes) ------------------------------------------------
  const discoverOnce = async (): Promise<boolean> => {
    try {
      const res = await doFetch(`${base}/v1/tables`, {
        headers: headers(null),
        signal: requestSignal(closing.signal, requestTimeoutMs),
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
          logger.warn("router-client: skipping an invalid table in the list", { error: parsed.error });
          continue;
        }
        const table = parsed.value;
        seen.add(table.route);
        const s = addRoute(table.route);
        // The per-route long-poll is authoritative; the list only fills in or moves forward.
        if (s.snapshot === null || table.version > s.snapshot.version) {
          s.lastPullAt = now();
          setTable(s, table, "control-plane");
        }
      }
      for (const route of [...states.keys()]) if (!seen.has(route)) await removeRoute(route);
      discoveryFailures = 0;
      listed = true;
      return true;
    } catch (e) {
      if (closing.signal.aborted) return false;
      discoveryFailures += 1;
      const log = discoveryFailures === 1 || discoveryFailures % 10 === 0 ? logger.warn : logger.info;
      log("router-client: listing tables failed; keeping the known routes", {
        failures: discoveryFailures,
        error: errorText(e),
      });
      return false;
    }
  };

  const runDiscovery = async (): Promise<void> => {
    while (!closing.signal.aborted) {
      const pause = discoveryFailures > 0 ? backoffDelay(backoff, discoveryFailures, rng) : discoveryIntervalMs;
      await sleep(Math.min(pause, discoveryIntervalMs), closing.signal);
      if (closing.signal.aborted) break;
      await discoverOnce();
    }
  };

  // ---- public ----------------------------------------------------------------------
  return {
    async start() {
      if (started) throw new Error("router-client: start() called twice");
      if (cacheFile !== null) {
        try {
          const loaded = await loadTables(cacheFile);
          if (loaded !== null) {
            for (const [route, saved] of loaded.tables) {
              if (!discovery && !fixedRoutes.includes(route)) continue;
              const s = addRoute(route);
              s.lastPullAt = saved.pulledAt;
              setTable(s, saved.table, "file");
              listed = true;
            }
            logger.info("router-client: loaded tables from the cache file", {
              file: cacheFile,
              savedAt: loaded.savedAt,
              routes: [...loaded.tables.keys()],
              rejected: loaded.rejected,
            });
          }
        } catch (e) {
          logger.error("router-client: could not read the table cache file; starting without it", {
            file: cacheFile,
            error: errorText(e),
          });
        }
      }
      for (const route of fixedRoutes) addRoute(route);
      started = true;
      if (discovery) await discoverOnce();
      for (const s of states.values()) addRoute(s.route);
      if (discovery) discoveryLoop = runDiscovery();
      const timeout = new AbortController();
      await Promise.race([
        Promise.all([...states.values()].map((s) => s.firstAttempt)),
        defaultSleep(startTimeoutMs, AbortSignal.any([timeout.signal, closing.signal])),
      ]);
      timeout.abort();
    },

    pick(route, pickOptions) {
      const snap = states.get(route)?.snapshot;
      return snap ? snap.picker.pick(rng, pickOptions) : null;
    },

    snapshot(route) {
      return states.get(route)?.snapshot ?? undefined;
    },

    routes() {
      const out: string[] = [];
      for (const s of states.values()) if (s.exists) out.push(s.route);
      return out;
    },

    version(route) {
      return states.get(route)?.snapshot?.version ?? null;
    },

    lastPullAt(route) {
      return states.get(route)?.lastPullAt ?? null;
    },

    ready() {
      for (const s of states.values()) if (s.exists && s.snapshot === null) return false;
      return states.size > 0;
    },

    routesKnown() {
      return listed;
    },

    status() {
      return [...states.values()].map((s) => ({
        route: s.route,
        version: s.snapshot?.version ?? null,
        mode: s.snapshot?.mode ?? null,
        lines: s.snapshot?.picker.items.length ?? 0,
        source: s.source,
        lastPullAt: s.lastPullAt,
        lastError: s.lastError,
        consecutiveFailures: s.failures,
      }));
    },

    async close() {
      closing.abort();
      for (const s of states.values()) s.abort.abort();
      await Promise.all([...states.values()].map((s) => s.loop));
      await discoveryLoop;
      await saving;
    },
  };
}
