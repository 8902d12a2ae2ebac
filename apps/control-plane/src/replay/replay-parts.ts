// A replay run in parts, one worker thread each (docs/replay.md: a day of 1000 lines in under a minute
// on two cores). Lines that share no route never affect each other (core's partitionReplay), so
// this thread reads the range once and hands each part its lines' rows in the range's order: on
// PostgreSQL as the binary COPY rows themselves, split by their line id without being parsed; on
// PGlite as the pages' result objects. Each part answers with its run; the merged run is the one
// a single replay gives (a test holds the reports byte-identical).
import { Worker } from "node:worker_threads";
import { mergeReplayRuns, type ReplayPart, type ReplayResult, type ReplayRun } from "@linewatch/core";
import { CopyRows, copyFields } from "./copy-results";
import type { FromPart, PartSetup, ToPart } from "./replay-worker";

/** Bytes of rows gathered for a part before they are sent (one message). */
const SEND_BYTES = 256 * 1024;
/** Messages a part may have unanswered before the read waits for it (bounds what is held). */
const IN_FLIGHT = 4;

/**
 * Where the worker's script is: `npm start`'s bundle names its own (build.mjs), since a bundled
 * module's import.meta.url is its source file's; from source (tsx, the tests) the worker loads
 * its TypeScript through tsx's API (a worker's --import does not take on Node 20).
 */
function startWorker(workerData: PartSetup): Worker {
  const bundled = (globalThis as { __linewatchWorkers?: Record<string, string> }).__linewatchWorkers?.["replay-worker"];
  if (bundled) return new Worker(new URL(bundled), { workerData });
  const source = JSON.stringify(new URL("./replay-worker.ts", import.meta.url).href);
  // Not caught: a failure to load or start rejects, and the worker's "error" event carries it.
  const boot = `import("tsx/esm/api").then(({ tsImport }) => tsImport(${source}, ${source}));`;
  return new Worker(boot, { eval: true, workerData });
}

class PartWorker {
  private readonly worker: Worker;
  private inFlight = 0;
  private wake: (() => void) | null = null;
  private failure: Error | null = null;
  readonly run: Promise<ReplayRun>;

  constructor(setup: PartSetup) {
    this.worker = startWorker(setup);
    this.run = new Promise<ReplayRun>((resolve, reject) => {
      const fail = (error: Error) => {
        this.failure ??= error;
        this.wake?.();
        reject(this.failure);
      };
      this.worker.on("message", (m: FromPart) => {
        if (m.kind === "ack") {
          this.inFlight--;
          this.wake?.();
        } else if (m.kind === "done") resolve(m.run);
        else fail(new Error(`replay part failed: ${m.message}`));
      });
      this.worker.on("error", fail);
      this.worker.on("exit", (code) => fail(new Error(`replay part exited (code ${code}) before its run`)));
    });
    // Read by whoever awaits it; a part that fails while nobody waits must not go unhandled.
    this.run.catch(() => {});
  }

  /** Sends rows; waits while the part has IN_FLIGHT messages unanswered. */
  async send(m: ToPart, transfer: ArrayBuffer[] = []): Promise<void> {
    while (this.inFlight >= IN_FLIGHT && this.failure === null) await new Promise<void>((r) => (this.wake = r));
    this.wake = null;
    if (this.failure) throw this.failure;
    this.inFlight++;
    this.worker.postMessage(m, transfer);
  }

  end(): void {
    this.worker.postMessage({ kind: "end" } satisfies ToPart);
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

/** Gathers one part's rows (COPY bytes or objects) until there are enough to send. */
class PartBuffer {
  private bytes = Buffer.allocUnsafeSlow(SEND_BYTES * 2);
  private used = 0;
  private rows: ReplayResult[] = [];

  constructor(readonly worker: PartWorker) {}

  copyRow(buf: Buffer, start: number, end: number): void {
    const n = end - start;
    if (this.used + n > this.bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, this.used + n));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    buf.copy(this.bytes, this.used, start, end);
    this.used += n;
  }

  addRow(row: ReplayResult): void {
    this.rows.push(row);
  }

  get full(): boolean {
    return this.used >= SEND_BYTES || this.rows.length >= 5000;
  }

  async flush(): Promise<void> {
    if (this.used > 0) {
      const bytes = new Uint8Array(this.bytes.buffer, this.bytes.byteOffset, this.used);
      this.bytes = Buffer.allocUnsafeSlow(SEND_BYTES * 2);
      this.used = 0;
      await this.worker.send({ kind: "copy", bytes }, [bytes.buffer as ArrayBuffer]);
    }
    if (this.rows.length > 0) {
      const rows = this.rows;
      this.rows = [];
      await this.worker.send({ kind: "rows", rows });
    }
  }
}

export interface PartedReplay {
  /** The binary COPY stream's chunks, in order; returns the rows it saw. */
  copyChunk(chunk: Buffer): Promise<number>;
  /** A page of results, in order. */
  rows(page: readonly ReplayResult[]): Promise<void>;
  /** After the COPY stream's last chunk: throws when it was cut off before its trailer. */
  copyEnd(): void;
  /** Every part's run, merged. */
  finish(): Promise<ReplayRun>;
  /** Stops every worker (after finish, or on an error or abort). */
  stop(): Promise<void>;
}

/** Starts a worker per part; rows of lines in no part are counted as skipped, as a single replay does. */
export function startReplayParts(parts: ReplayPart[], setup: Omit<PartSetup, "part">): PartedReplay {
  const workers = parts.map((part) => new PartWorker({ ...setup, part }));
  const buffers = workers.map((w) => new PartBuffer(w));
  // By the line id's 16 bytes as latin1 (what a COPY row holds) and by its text.
  const byBytes = new Map<string, PartBuffer>();
  const byId = new Map<string, PartBuffer>();
  parts.forEach((part, i) => {
    const buffer = buffers[i] as PartBuffer;
    for (const line of part.lines) {
      byId.set(line.id, buffer);
      byBytes.set(Buffer.from(line.id.replaceAll("-", ""), "hex").toString("latin1"), buffer);
    }
  });
  let outside = 0;
  const copy = new CopyRows(copyFields(setup.rescoring));
  let seen = 0;
  // line_id is a row's second field: 2 (field count) + 4 + 16 (id) + 4 (its length) bytes in.
  const route = (buf: Buffer, at: number, end: number) => {
    seen++;
    const part = byBytes.get(buf.toString("latin1", at + 24, at + 40));
    if (part) part.copyRow(buf, at - 2, end);
    else outside++;
  };
  const flushFull = async () => {
    for (const b of buffers) if (b.full) await b.flush();
  };
  return {
    async copyChunk(chunk) {
      seen = 0;
      copy.push(chunk, route);
      await flushFull();
      return seen;
    },
    async rows(page) {
      for (const row of page) {
        const part = byId.get(row.lineId);
        if (part) part.addRow(row);
        else outside++;
      }
      await flushFull();
    },
    copyEnd() {
      copy.end();
    },
    async finish() {
      for (const b of buffers) await b.flush();
      for (const w of workers) w.end();
      const runs = await Promise.all(workers.map((w) => w.run));
      return mergeReplayRuns(runs, outside);
    },
    async stop() {
      await Promise.all(workers.map((w) => w.stop()));
    },
  };
}
