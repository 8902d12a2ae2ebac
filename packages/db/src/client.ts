import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { setFlagsFromString } from "node:v8";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import postgres, { type Sql } from "postgres";
import { protectDataDir } from "./data-dir";
import { migratePglite, migratePostgres } from "./migrate";
import * as schema from "./schema/index";

export type Schema = typeof schema;
/** The query surface both drivers share; queries are written once against it. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  db: Db;
  driver: "pglite" | "postgres";
  /** The postgres.js client under `db`, on PostgreSQL only: for what drizzle does not do (COPY streams). */
  postgres?: Sql;
  /** Round-trip to the database; throws when it is unreachable. */
  ping(): Promise<void>;
  /**
   * Cross-process wake-ups (PostgreSQL LISTEN/NOTIFY; in-process for PGlite). `onListen` runs each
   * time the listener is (re)connected: notifications sent while it was down are lost, so a caller
   * that caches what they announce reloads it then.
   */
  listen(channel: string, onPayload: (payload: string) => void, onListen?: () => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface DbOptions {
  /** postgres://… → PostgreSQL via postgres.js; unset → embedded PGlite. */
  url?: string | undefined;
  /** PGlite data directory; "memory" keeps it in memory (tests). */
  dataDir?: string;
  /** Apply the migrations in drizzle/ (default true). */
  migrate?: boolean;
  /** postgres.js pool size. */
  maxConnections?: number;
  /** Told when an existing PGlite data directory had modes open to others and they were tightened. */
  onDataDirModesFixed?: (dir: string, fixed: number) => void;
}

/** A database just opened, with the way its driver applies the migrations. */
interface Opened {
  database: Database;
  migrate(): Promise<void>;
}

export async function createDb(opts: DbOptions): Promise<Database> {
  const { database, migrate } = opts.url
    ? createPostgres(opts.url, opts.maxConnections ?? 10)
    : await createPglite(opts.dataDir ?? "./.linewatch/data", opts.onDataDirModesFixed);
  if (opts.migrate !== false) {
    try {
      await migrate();
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  return database;
}

/** Readiness must answer quickly, database or not. */
const PING_TIMEOUT_MS = 3_000;

/**
 * Seconds before a pooled connection tries again after a failed connect. postgres.js's default
 * grows to 10–20 s, so after an outage the pool kept failing queries for that long after the
 * database was back; capped at 1 s it reconnects within a second and costs little meanwhile.
 */
export const reconnectBackoffSec = (attempt: number): number => Math.min(0.05 * 2 ** attempt, 1) * (0.5 + Math.random() / 2);

function createPostgres(url: string, max: number): Opened {
  // fetch_types off: no array types are used, and its query at connect time rejects unhandled (a crash)
  // when the connection drops right after it opens. The nextWrite crash on a closed socket is patched
  // in patches/postgres+3.4.9.patch (porsager/postgres#1154).
  const client = postgres(url, {
    max,
    onnotice: () => {},
    connect_timeout: 5,
    idle_timeout: 30,
    backoff: reconnectBackoffSec,
    fetch_types: false,
  });
  const db: Db = drizzlePostgres({ client, schema });
  const database: Database = {
    db,
    driver: "postgres",
    postgres: client,
    ping: async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer from the database within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
      });
      try {
        await Promise.race([client`select 1`.execute(), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    listen: async (channel, onPayload, onListen) => {
      // postgres.js reconnects its listening connection by itself and calls onlisten each time.
      let first = true;
      const sub = await client.listen(channel, onPayload, () => {
        if (first) first = false;
        else onListen?.();
      });
      return () => sub.unlisten();
    },
    notify: async (channel, payload) => {
      await client.notify(channel, payload);
    },
    close: () => client.end({ timeout: 5 }),
  };
  return { database, migrate: () => migratePostgres(url) };
}

/**
 * PGlite's settings. PostgreSQL's default shared_buffers (128MB) lives in PGlite's WebAssembly heap,
 * which never shrinks: a control plane on PGlite held 3–4× the memory of one on PostgreSQL. 16MB
 * keeps the working set of a few hundred lines (the rest is read from the data files through the
 * OS's page cache); a larger registry belongs on PostgreSQL (README, "Which database").
 */
export const PGLITE_SETTINGS: readonly string[] = ["shared_buffers=16MB"];
/**
 * PGlite's PostgreSQL is 9 MB of WebAssembly; V8's optimizing tier compiles it again in the
 * background, which cost ~50 MB of code (and ~90 MB at its peak) for no speed a control plane's
 * queries could tell here (bench/memory). The baseline compiler alone keeps it out. A V8 flag is
 * the process's: it is set when the first PGlite opens (it counts for modules compiled after it),
 * and a process on PostgreSQL never sets it.
 */
const WASM_FLAGS = "--liftoff-only";
const pgliteStartParams = [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((s) => ["-c", s])];
const initdbScript = fileURLToPath(new URL("./pglite-initdb.mjs", import.meta.url));

/** A new data directory is made in a child process (pglite-initdb.mjs says why). */
async function initPgliteDataDir(dataDir: string): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, [WASM_FLAGS, initdbScript, dataDir, JSON.stringify(PGLITE_SETTINGS)], {
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`could not create the PGlite database in ${dataDir}: ${stderr || (error as Error).message}`);
  }
}

async function createPglite(dataDir: string, onModesFixed?: (dir: string, fixed: number) => void): Promise<Opened> {
  setFlagsFromString(WASM_FLAGS);
  if (dataDir !== "memory") {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const fresh = !existsSync(join(dataDir, "PG_VERSION"));
    if (fresh) await initPgliteDataDir(dataDir);
    // The child's files come 0666 like PGlite's own; an existing directory open to others is reported.
    const fixed = protectDataDir(dataDir);
    if (fixed > 0 && !fresh) onModesFixed?.(dataDir, fixed);
  }
  const client = new PGlite(dataDir === "memory" ? undefined : dataDir, { startParams: pgliteStartParams });
  await client.waitReady;
  // The files PGlite just created (all of them, in a fresh directory) come 0666.
  if (dataDir !== "memory") protectDataDir(dataDir);
  const pglite = drizzlePglite({ client, schema });
  const db: Db = pglite;
  let closed = false;
  const database: Database = {
    db,
    driver: "pglite",
    ping: async () => {
      if (closed) throw new Error("database is closed");
      await db.execute(sql`select 1`);
    },
    listen: async (channel, onPayload) => client.listen(channel, onPayload),
    notify: async (channel, payload) => {
      await client.query("select pg_notify($1, $2)", [channel, payload]);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
  return { database, migrate: () => migratePglite(pglite) };
}
