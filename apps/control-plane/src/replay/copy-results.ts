// The replay's read on PostgreSQL: one `COPY (select … order by started_at, id) TO STDOUT` in the
// binary format, parsed by hand as it streams in. Reading rows through the driver (keyset pages of
// row objects, every column parsed from text) was the replay's floor; binary COPY sends the columns
// as they are stored (uuids as 16 bytes, times as integer microseconds), the scan follows the
// started_at index, and the socket's backpressure bounds what is held in memory. Read only.
import { parseFingerprintStep, type ReplayResult, type ScoreComponents } from "@linewatch/core";
import type { Database } from "@linewatch/db";
import type { Sql } from "postgres";

export interface CopyRange {
  from: number;
  to: number;
  /** Only these lines' results; null: every line. */
  lineIds: readonly string[] | null;
}

/** The postgres.js client under drizzle; null on PGlite (which has no COPY TO STDOUT stream). */
export function postgresClient(database: Pick<Database, "driver" | "postgres">): Sql | null {
  if (database.driver !== "postgres") return null;
  return database.postgres ?? null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Microseconds from the Unix epoch to PostgreSQL's (2000-01-01). */
const PG_EPOCH_US = 946_684_800_000_000;
const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");

/** The COPY statement: literals only (COPY takes no parameters), each checked before it is written. */
export function copyStatement(range: CopyRange, rescoring: boolean): string {
  const iso = (ms: number) => {
    const s = new Date(ms).toISOString();
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(s)) throw new Error(`not a time: ${ms}`);
    return `'${s}'::timestamptz`;
  };
  let lines = "";
  if (range.lineIds !== null) {
    for (const id of range.lineIds) if (!UUID.test(id)) throw new Error(`not a line id: ${JSON.stringify(id)}`);
    lines = ` and line_id = any('{${range.lineIds.join(",")}}'::uuid[])`;
  }
  // What re-scoring needs (components, a failed check) costs the server most of a row: read only then.
  const extra = rescoring ? `, components::text, jsonb_path_exists(checks, '$[*] ? (@.verdict == "fail")')` : "";
  // A fingerprint answer's stored step last (its length varies; other rows have none): the machine steps it as live.
  return `copy (select id, line_id, sample_id, started_at, latency_ms, score, passed, hard_failure, content_length${extra}, (relay->'fingerprint')::text
    from probe_results where started_at >= ${iso(range.from)} and started_at < ${iso(range.to)}${lines}
    order by started_at, id) to stdout with (format binary)`;
}

/**
 * A float4 as the driver gives it from its text form: PostgreSQL writes the shortest decimal that
 * reads back to the same float4 (0.1, not 0.100000001…), so a binary read must find that decimal
 * too or a re-scored or averaged score would differ in its last digits. Scores are rounded to 0.1,
 * so few distinct values come by: each is worked out once.
 */
class Float4Decimals {
  private readonly known = new Map<number, number>();
  private readonly scratch = Buffer.alloc(4);

  of(bits: number): number {
    const hit = this.known.get(bits);
    if (hit !== undefined) return hit;
    this.scratch.writeInt32BE(bits, 0);
    const f = this.scratch.readFloatBE(0);
    let value = f;
    if (Number.isFinite(f) && f !== 0)
      for (let p = 1; p <= 9; p++) {
        const d = Number(f.toPrecision(p));
        if (Math.fround(d) === f) {
          value = d;
          break;
        }
      }
    if (this.known.size < 100_000) this.known.set(bits, value);
    return value;
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * Walks a binary COPY stream's rows as its chunks arrive, handing each complete row to a callback.
 * `bare`: the chunks are whole rows only, with no header or trailer (a part of a split stream).
 */
export class CopyRows {
  private rest: Buffer = EMPTY;
  private headerDone: boolean;
  private ended = false;

  constructor(
    private readonly fields: number,
    bare = false,
  ) {
    this.headerDone = bare;
  }

  /** Calls `each(buf, at, end)` for every row complete in what has arrived: `at` its first field's length, `end` past its last byte. */
  push(chunk: Buffer, each: (buf: Buffer, at: number, end: number) => void): void {
    const buf = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
    let off = 0;
    if (!this.headerDone) {
      if (buf.length < 19) {
        this.rest = buf;
        return;
      }
      if (!buf.subarray(0, 11).equals(SIGNATURE)) throw new Error("not a binary COPY stream");
      off = 19 + buf.readInt32BE(15);
      this.headerDone = true;
    }
    for (;;) {
      if (off + 2 > buf.length) break;
      const n = buf.readInt16BE(off);
      if (n === -1) {
        this.ended = true;
        off += 2;
        break;
      }
      if (n !== this.fields) throw new Error(`a COPY row of ${n} fields, ${this.fields} expected`);
      // Is the whole row here? Walk its field lengths first.
      let p = off + 2;
      let whole = true;
      for (let i = 0; i < n; i++) {
        if (p + 4 > buf.length) {
          whole = false;
          break;
        }
        const len = buf.readInt32BE(p);
        p += 4 + Math.max(len, 0);
      }
      if (!whole || p > buf.length) break;
      each(buf, off + 2, p);
      off = p;
    }
    this.rest = off >= buf.length ? EMPTY : Buffer.from(buf.subarray(off));
  }

  /** Whether the stream's trailer came (a stream that stops before it was cut off). */
  get complete(): boolean {
    return this.ended && this.rest.length === 0;
  }

  /** After the stream's last chunk: throws when it was cut off before its trailer. */
  end(): void {
    if (!this.complete) throw new Error("the COPY stream ended before its trailer");
  }
}

/** Fields of a row of `copyStatement`. */
export const copyFields = (rescoring: boolean): number => (rescoring ? 12 : 10);

/**
 * Parses the binary COPY stream into results, a batch per chunk that arrives. Line and sample ids
 * are interned (one string per line, the registry's), so the replay's maps find them by identity.
 */
export class CopyResultParser {
  private readonly rows: CopyRows;
  private readonly ids = new Map<string, string>();
  private readonly scores = new Float4Decimals();
  private out: ReplayResult[] = [];
  private readonly each = (buf: Buffer, at: number): void => {
    this.out.push(this.row(buf, at));
  };

  /** `bare`: chunks of whole rows without the stream's header and trailer (see CopyRows). */
  constructor(
    private readonly rescoring: boolean,
    bare = false,
  ) {
    this.rows = new CopyRows(copyFields(rescoring), bare);
  }

  /** The results whose bytes are complete in what has arrived so far. */
  push(chunk: Buffer): ReplayResult[] {
    this.out = [];
    this.rows.push(chunk, this.each);
    return this.out;
  }

  /** Whether the stream's trailer came (a stream that stops before it was cut off). */
  get complete(): boolean {
    return this.rows.complete;
  }

  /** After the stream's last chunk: throws when it was cut off before its trailer. */
  end(): void {
    this.rows.end();
  }

  private intern(buf: Buffer, at: number): string {
    const key = buf.toString("latin1", at, at + 16);
    let id = this.ids.get(key);
    if (id === undefined) {
      id = uuidText(buf, at);
      this.ids.set(key, id);
    }
    return id;
  }

  /** One row; `p` at its first field's length. Fields that cannot be null are read without a check. */
  private row(buf: Buffer, p: number): ReplayResult {
    // id, line_id, sample_id: uuid (4 + 16 bytes each)
    const id = uuidText(buf, p + 4);
    const lineId = this.intern(buf, p + 24);
    const sampleId = this.intern(buf, p + 44);
    // started_at: int8 µs since 2000-01-01; hi × 2^32 + lo is exact below 2^53 (until the year 2255)
    const us = buf.readInt32BE(p + 64) * 4_294_967_296 + buf.readUInt32BE(p + 68) + PG_EPOCH_US;
    const latencyMs = buf.readInt32BE(p + 76);
    const score = this.scores.of(buf.readInt32BE(p + 84));
    const passed = buf[p + 92] === 1;
    const hardFailure = buf[p + 97] === 1;
    const contentLength = buf.readInt32BE(p + 102);
    let components: ScoreComponents | null = null;
    let failedCheck = false;
    let q = p + 106;
    if (this.rescoring) {
      const len = buf.readInt32BE(q);
      if (len >= 0) components = JSON.parse(buf.toString("utf8", q + 4, q + 4 + len)) as ScoreComponents;
      q += 4 + Math.max(0, len);
      failedCheck = buf[q + 4] === 1;
      q += 5;
    }
    const stepLen = buf.readInt32BE(q);
    const fingerprint = stepLen < 0 ? null : parseFingerprintStep(JSON.parse(buf.toString("utf8", q + 4, q + 4 + stepLen)));
    return {
      id,
      lineId,
      sampleId,
      startedAt: Math.floor(us / 1000),
      latencyMs,
      score,
      passed,
      hardFailure,
      components,
      failedCheck,
      contentLength,
      fingerprint,
    };
  }
}

/** A uuid's 16 bytes as its text (lower case, dashed): the form the rest of linewatch uses. */
function uuidText(buf: Buffer, at: number): string {
  const h = buf.toString("hex", at, at + 16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * The range's results in (started_at, id) order, a batch (what one chunk of the stream completes)
 * at a time, from one COPY. Aborting cancels the statement on the server; breaking off does too.
 */
export async function* copyResultBatches(
  client: Sql,
  range: CopyRange,
  opts: { rescoring?: boolean; signal?: AbortSignal } = {},
): AsyncGenerator<ReplayResult[]> {
  const rescoring = opts.rescoring ?? false;
  const parser = new CopyResultParser(rescoring);
  for await (const chunk of copyChunks(client, copyStatement(range, rescoring), opts.signal)) {
    const batch = parser.push(chunk);
    if (batch.length > 0) yield batch;
  }
  parser.end();
}

/** The bytes of a `COPY … TO STDOUT`, as they arrive; aborting or breaking off cancels it on the server. */
export async function* copyChunks(client: Sql, statement: string, signal?: AbortSignal): AsyncGenerator<Buffer> {
  signal?.throwIfAborted();
  const query = client.unsafe(statement);
  const stream = await query.readable();
  // Once the server has sent its last row there is nothing to cancel, and a cancel request then
  // could reach the connection's next statement instead.
  let sent = false;
  stream.once("end", () => {
    sent = true;
    // postgres.js pauses the connection's socket when the stream's buffer is full and resumes it
    // when the stream asks for more; when the last rows and CopyDone came in one chunk, an ended
    // stream never asks again and the pooled connection hangs (porsager/postgres#1016, #499). Its
    // read() is that resume.
    stream._read(0);
  });
  const stop = (error?: Error) => {
    if (!sent) void query.cancel();
    stream.destroy(error);
  };
  const onAbort = () => stop(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
  signal?.addEventListener("abort", onAbort, { once: true });
  let finished = false;
  try {
    for await (const chunk of stream) yield chunk as Buffer;
    signal?.throwIfAborted();
    finished = true;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    // Stopped early (an error, an abort, the caller broke off): stop the server's side too.
    if (!finished) stop();
  }
}
