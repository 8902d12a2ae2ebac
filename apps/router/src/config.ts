// The one file that reads process.env for the router. Plain checks (the router keeps its
// dependencies to the proxy path); every error names the variable.

import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { allowEntryProblem } from "@linewatch/router-client";

export interface RouterConfig {
  /** Control-plane base URL. */
  controlPlaneUrl: string;
  /**
   * Router-scoped token. Without it a control plane that has tokens answers 401 to every table
   * pull and outcome push (the router serves only its cache file); in open mode lines carry no credentials.
   */
  token: string | null;
  /** Routes to serve; empty: every route the control plane lists. */
  routes: string[];
  host: string;
  port: number;
  /** Last good tables on disk, relative to the process's working directory; null: memory only. */
  cacheFile: string | null;
  /** Time allowed for an upstream's response headers, and between two body chunks. */
  upstreamTimeoutMs: number;
  connectTimeoutMs: number;
  /** Long-poll hold of table pulls. */
  waitSec: number;
  maxBodyBytes: number;
  /** Host names, addresses or CIDRs an upstream may use although they are cloud metadata / link-local (as the control plane's). */
  allowUpstreamHosts: string[];
  /** Names this router in outcome reports (with the window id, the idempotency key). */
  routerId: string;
  /** ms between outcome pushes to the control plane; 0: no reports. */
  reportIntervalMs: number;
  /** Closed report windows kept while the control plane is unreachable. */
  reportBacklog: number;
  /** Classify every answer in-band (docs/live-evidence.md) and retry non-streamed empty / masked-error answers. */
  inBandCheck: boolean;
  /** `finish_reason: "length"` under this many completion tokens is a `cut` answer. */
  cutMinTokens: number;
  /** Retries as a percentage of recent requests (the retry budget). */
  retryBudgetPct: number;
  /** Retries always allowed per budget window (10 s), for quiet routers. */
  retryBudgetMin: number;
  /** Consecutive failed answers after which a line gets no first attempts for 5 s; 0: never. */
  ejectAfterFailures: number;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer in [${min}, ${max}]; got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** Tokens minted by the control plane say their role: `lw_<role>_…`. */
const MINTED_ROLE = /^lw_(admin|viewer|router)_/;

export function defaultRouterId(): string {
  return `${hostname().replace(/[^A-Za-z0-9._:-]/g, "-") || "router"}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (["1", "true", "on", "yes"].includes(raw)) return true;
  if (["0", "false", "off", "no"].includes(raw)) return false;
  throw new ConfigError(`${name} must be on or off; got ${JSON.stringify(env[name])}`);
}

export function loadConfig(env: Env): Readonly<RouterConfig> {
  const url = env.LINEWATCH_URL?.trim();
  if (!url) throw new ConfigError("LINEWATCH_URL is required: the control plane's base URL, e.g. http://127.0.0.1:8787");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`LINEWATCH_URL is not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ConfigError(`LINEWATCH_URL must be http(s); got ${JSON.stringify(url)}`);
  }
  const routes = (env.LINEWATCH_ROUTES ?? "")
    .split(",")
    .map((r) => r.trim())
    .filter((r) => r !== "");
  const allowUpstreamHosts = (env.LINEWATCH_ALLOW_UPSTREAM_HOSTS ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  for (const entry of allowUpstreamHosts) {
    const problem = allowEntryProblem(entry);
    if (problem) throw new ConfigError(`LINEWATCH_ALLOW_UPSTREAM_HOSTS: ${JSON.stringify(entry)}: ${problem}`);
  }
  const token = env.LINEWATCH_TOKEN?.trim() || null;
  const minted = token === null ? null : MINTED_ROLE.exec(token)?.[1];
  if (minted && minted !== "router") {
    throw new ConfigError(
      `LINEWATCH_TOKEN is a${minted === "admin" ? "n" : ""} ${minted} token; a router needs a router token (its tables carry the lines' credentials): npx linewatch tokens create <name> --role router`,
    );
  }
  const routerId = env.LINEWATCH_ROUTER_ID?.trim() || defaultRouterId();
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(routerId)) {
    throw new ConfigError(`LINEWATCH_ROUTER_ID must be letters, digits and . _ : - (at most 128); got ${JSON.stringify(routerId)}`);
  }
  const cacheRaw = env.LINEWATCH_CACHE_FILE;
  const cacheFile = cacheRaw === undefined ? "./.linewatch/router-tables.json" : cacheRaw.trim() === "" ? null : cacheRaw.trim();
  return Object.freeze({
    controlPlaneUrl: url.replace(/\/+$/, ""),
    token,
    routes,
    host: env.HOST?.trim() || "127.0.0.1",
    port: integer(env, "PORT", 8788, 0, 65535),
    cacheFile,
    upstreamTimeoutMs: integer(env, "LINEWATCH_UPSTREAM_TIMEOUT_MS", 60_000, 100, 3_600_000),
    connectTimeoutMs: integer(env, "LINEWATCH_CONNECT_TIMEOUT_MS", 5_000, 100, 120_000),
    waitSec: integer(env, "LINEWATCH_WAIT_SEC", 30, 1, 60),
    maxBodyBytes: integer(env, "LINEWATCH_MAX_BODY_BYTES", 8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    allowUpstreamHosts,
    routerId,
    reportIntervalMs: integer(env, "LINEWATCH_REPORT_INTERVAL_MS", 5_000, 0, 600_000),
    reportBacklog: integer(env, "LINEWATCH_REPORT_BACKLOG", 120, 1, 100_000),
    inBandCheck: flag(env, "LINEWATCH_INBAND_CHECK", true),
    cutMinTokens: integer(env, "LINEWATCH_CUT_MIN_TOKENS", 16, 0, 1_000_000),
    retryBudgetPct: integer(env, "LINEWATCH_RETRY_BUDGET_PCT", 20, 0, 100),
    retryBudgetMin: integer(env, "LINEWATCH_RETRY_BUDGET_MIN", 10, 0, 10_000),
    ejectAfterFailures: integer(env, "LINEWATCH_EJECT_AFTER_FAILURES", 3, 0, 1000),
  });
}
