// The one file that reads process.env for the router. Plain checks (the router keeps its
// dependencies to the proxy path); every error names the variable.
import { allowEntryProblem } from "@linewatch/router-client";

export interface RouterConfig {
  /** Control-plane base URL. */
  controlPlaneUrl: string;
  /** Router-scoped token; without it lines carry no credentials. */
  token: string | null;
  /** Routes to serve; empty: every route the control plane lists. */
  routes: string[];
  host: string;
  port: number;
  /** Last good tables on disk; null: memory only. */
  cacheFile: string | null;
  /** Time allowed for an upstream's response headers, and between two body chunks. */
  upstreamTimeoutMs: number;
  connectTimeoutMs: number;
  /** Long-poll hold of table pulls. */
  waitSec: number;
  maxBodyBytes: number;
  /** Host names, addresses or CIDRs an upstream may use although they are cloud metadata / link-local (as the control plane's). */
  allowUpstreamHosts: string[];
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
  const cacheRaw = env.LINEWATCH_CACHE_FILE;
  const cacheFile = cacheRaw === undefined ? "./.linewatch/router-tables.json" : cacheRaw.trim() === "" ? null : cacheRaw.trim();
  return Object.freeze({
    controlPlaneUrl: url.replace(/\/+$/, ""),
    token: env.LINEWATCH_TOKEN?.trim() || null,
    routes,
    host: env.HOST?.trim() || "127.0.0.1",
    port: integer(env, "PORT", 8788, 0, 65535),
    cacheFile,
    upstreamTimeoutMs: integer(env, "LINEWATCH_UPSTREAM_TIMEOUT_MS", 60_000, 100, 3_600_000),
    connectTimeoutMs: integer(env, "LINEWATCH_CONNECT_TIMEOUT_MS", 5_000, 100, 120_000),
    waitSec: integer(env, "LINEWATCH_WAIT_SEC", 30, 1, 60),
    maxBodyBytes: integer(env, "LINEWATCH_MAX_BODY_BYTES", 8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    allowUpstreamHosts,
  });
}
