import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The control plane as `npm start` runs it: bundled by apps/control-plane/build.mjs, once per test
 * worker (a file of its own, so workers building at once do not overwrite each other's).
 */
let bundle: Promise<string> | null = null;
function controlPlaneBundle(): Promise<string> {
  bundle ??= (async () => {
    const out = join(repoRoot, "apps/control-plane/dist", `test-${process.pid}-${randomBytes(4).toString("hex")}.mjs`);
    await promisify(execFile)(process.execPath, ["apps/control-plane/build.mjs", "apps/control-plane/src/main.ts", out], { cwd: repoRoot });
    process.once("exit", () => {
      // The bundle, its replay worker's (build.mjs) and their source maps.
      const worker = out.replace(/\.mjs$/, ".replay-worker.mjs");
      for (const f of [out, `${out}.map`, worker, `${worker}.map`]) rmSync(f, { force: true });
    });
    return out;
  })();
  return bundle;
}

export interface LogLine {
  t: string;
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** A control plane running as a real child process (`apps/control-plane/src/main.ts`). */
export interface ControlPlaneProcess {
  url: string;
  pid: number;
  replicaId: string;
  /** Its JSON log lines (stderr) so far. */
  logs(): LogLine[];
  /** Its raw stderr that was not a JSON log line (crash messages). */
  stderr(): string;
  request(path: string, init?: RequestInit & { json?: unknown; token?: string }): Promise<Response>;
  /** `kill -9`: no shutdown hook runs; in-flight probes and claims are left as they are. */
  kill9(): Promise<void>;
  /** SIGTERM: the graceful path (in-flight probes finish, claims are handed back). */
  stop(): Promise<void>;
  /** A new process with the same environment (same replica id, database and secret key). */
  restart(): Promise<ControlPlaneProcess>;
  /** Whether the process is still running. */
  alive(): boolean;
  /** Resolves with the exit code or signal when the process ends. */
  exited: Promise<string>;
}

export interface ControlPlaneProcessOptions {
  /** null: the embedded database (PGlite) in `dataDir`. */
  databaseUrl: string | null;
  /** null: no LINEWATCH_REPLICA_ID (the process makes up its own); absent: a random one. */
  replicaId?: string | null;
  /** LINEWATCH_DATA_DIR, kept when the process ends (a restart reopens it); absent: a temporary one, removed. */
  dataDir?: string;
  /** Extra environment (LINEWATCH_*, LOG_LEVEL…). */
  env?: Record<string, string>;
  /** Same for every process of a test so restarts can decrypt the stored keys. */
  secretKey?: string;
  readyTimeoutMs?: number;
}

/**
 * Start the control plane's bundle (`apps/control-plane/src/main.ts`, as `npm start` runs it) with
 * `node` (one process, so `kill -9` hits the control plane itself, not an npm wrapper that would
 * leave it orphaned), on a free port, and wait until /readyz answers 200.
 */
export async function startControlPlaneProcess(opts: ControlPlaneProcessOptions): Promise<ControlPlaneProcess> {
  const replicaId = opts.replicaId === null ? "(own id)" : (opts.replicaId ?? `cp-${randomBytes(3).toString("hex")}`);
  const secretKey = opts.secretKey ?? randomBytes(32).toString("hex");
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "lw-cp-"));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? tmpdir(),
    PORT: "0",
    HOST: "127.0.0.1",
    ...(opts.databaseUrl === null ? {} : { DATABASE_URL: opts.databaseUrl }),
    ...(opts.replicaId === null ? {} : { LINEWATCH_REPLICA_ID: replicaId }),
    LINEWATCH_SECRET_KEY: secretKey,
    LINEWATCH_DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    // The golden samples only, as these tests count them (the fingerprint bank: relay-fakes tests).
    LINEWATCH_SHIPPED_FINGERPRINTS: "false",
    ...opts.env,
  };
  const child = spawn(process.execPath, [await controlPlaneBundle()], {
    cwd: repoRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logLines: LogLine[] = [];
  let rawStderr = "";
  let stdout = "";
  let exitedWith: string | null = null;
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => {
      exitedWith = signal ?? String(code);
      if (opts.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
      resolve(exitedWith);
    });
  });
  let pending = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk;
    const parts = pending.split("\n");
    pending = parts.pop() ?? "";
    for (const line of parts) {
      try {
        logLines.push(JSON.parse(line) as LogLine);
      } catch {
        rawStderr += `${line}\n`;
      }
    }
  });
  const urlFound = new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const m = /linewatch control plane: (http:\/\/\S+)/.exec(stdout);
      if (m) resolve(m[1]!);
    });
    void exited.then((how) =>
      reject(
        new Error(`control plane ${replicaId} exited (${how}) before it listened:\n${rawStderr}\n${JSON.stringify(logLines.slice(-20))}`),
      ),
    );
  });
  const timeout = opts.readyTimeoutMs ?? 60_000;
  const url = await withTimeout(urlFound, timeout, `control plane ${replicaId} did not start within ${timeout} ms`).catch(
    (error: unknown) => {
      child.kill("SIGKILL");
      throw error;
    },
  );
  const deadline = Date.now() + timeout;
  for (;;) {
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (exitedWith !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`control plane ${replicaId} not ready: ${rawStderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const signalAndWait = async (child: ChildProcess, signal: NodeJS.Signals, graceMs: number) => {
    if (exitedWith !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  };

  return {
    url,
    pid: child.pid!,
    replicaId,
    logs: () => [...logLines],
    stderr: () => rawStderr,
    request: (path, init = {}) => {
      const { json, token, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (json !== undefined) headers.set("content-type", "application/json");
      if (token) headers.set("authorization", `Bearer ${token}`);
      return fetch(`${url}${path}`, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
    },
    kill9: () => signalAndWait(child, "SIGKILL", 10_000),
    stop: () => signalAndWait(child, "SIGTERM", 60_000),
    restart: async () => {
      await signalAndWait(child, "SIGTERM", 60_000);
      return startControlPlaneProcess({ ...opts, replicaId: opts.replicaId === null ? null : replicaId, secretKey });
    },
    alive: () => exitedWith === null,
    exited,
  };
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
