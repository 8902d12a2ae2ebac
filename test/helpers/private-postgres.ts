import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import postgres from "postgres";

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of a test's own, on a free port of 127.0.0.1: fault tests stop and start it
 * without touching the machine's shared server, which other suites use at the same time.
 */
export interface PrivatePostgres {
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/<database> */
  url(database?: string): string;
  /** A fresh empty database on this cluster; returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stop the server at once (open connections are cut, like a crash of the database host). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stop it and delete its files. */
  dispose(): Promise<void>;
  /** The server's own log, for a failing test's message. */
  log(): Promise<string>;
}

/** Where initdb and pg_ctl are: PG_BIN, else the newest /usr/lib/postgresql/<n>/bin, else PATH. */
function postgresBinDir(): string | null {
  if (process.env.PG_BIN && existsSync(join(process.env.PG_BIN, "initdb"))) return process.env.PG_BIN;
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], "bin");
  }
  return null;
}

/** True when this machine can run a private cluster (the fault tests skip otherwise). */
export const canRunPrivatePostgres = (): boolean => postgresBinDir() !== null;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** PostgreSQL refuses to run as root: as root, its tools run as the `postgres` OS user. */
async function asOwner(bin: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const isRoot = process.getuid?.() === 0;
  const [cmd, argv] = isRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  return run(cmd, argv, { timeout: 120_000 });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("no PostgreSQL binaries (initdb, pg_ctl) found; set PG_BIN");
  const dir = mkdtempSync(join(tmpdir(), "lw-pg-"));
  const isRoot = process.getuid?.() === 0;
  if (isRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, "data");
  const logFile = join(dir, "server.log");
  await asOwner(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
  const port = await freePort();
  // Durability is not under test here, start/stop speed is: no fsync. The socket lives in the cluster's own dir.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const pgCtl = (...args: string[]) => asOwner(join(bin, "pg_ctl"), ["-D", data, ...args]);
  const url = (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`;
  let running = false;

  const start = async () => {
    await pgCtl("-o", options, "-l", logFile, "-w", "-t", "60", "start");
    running = true;
  };
  const stop = async () => {
    // "immediate": the server goes away the way a crashed or unplugged database host does.
    await pgCtl("-m", "immediate", "-w", "-t", "60", "stop");
    running = false;
  };
  await start();

  let counter = 0;
  return {
    port,
    url,
    createDatabase: async (name = `lw_fault_${process.pid}_${++counter}`) => {
      const admin = postgres(url(), { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`create database ${name}`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    start,
    stop,
    dispose: async () => {
      if (running) await stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
    log: async () => {
      const { readFile } = await import("node:fs/promises");
      return readFile(logFile, "utf8").catch(() => "");
    },
  };
}
