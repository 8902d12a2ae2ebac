// One part of a partitioned replay, in a worker thread (replay-parts.ts starts it): the part's rows
// come in as whole binary COPY rows (PostgreSQL) or as result objects (PGlite's pages), in the
// range's order; it runs core's PolicyReplay over them and answers with the run.
import { parentPort, workerData } from "node:worker_threads";
import { type HealthPolicy, PolicyReplay, type ReplayPart, type ReplayResult, type ReplayRun, type ReplayScoring } from "@linewatch/core";
import { CopyResultParser } from "./copy-results";

/** What the worker is started with (structured-clone data only). */
export interface PartSetup {
  from: number;
  to: number;
  part: ReplayPart;
  sampleWeights: Map<string, number>;
  policies: Map<string, HealthPolicy>;
  scoring: ReplayScoring | null;
  rescoring: boolean;
  timelineLine: string | null;
}

export type ToPart = { kind: "copy"; bytes: Uint8Array } | { kind: "rows"; rows: ReplayResult[] } | { kind: "end" };
export type FromPart = { kind: "ack" } | { kind: "done"; run: ReplayRun } | { kind: "error"; message: string };

const port = parentPort;
if (port) {
  const setup = workerData as PartSetup;
  const keep = setup.timelineLine;
  const replay = new PolicyReplay({
    from: setup.from,
    to: setup.to,
    lines: setup.part.lines,
    routes: setup.part.routes,
    sampleWeights: setup.sampleWeights,
    policies: setup.policies,
    scoring: setup.scoring,
    keepPoints: (id) => id === keep,
  });
  const parser = new CopyResultParser(setup.rescoring, true);
  const send = (m: FromPart) => port.postMessage(m);
  port.on("message", (m: ToPart) => {
    try {
      if (m.kind === "copy") {
        for (const row of parser.push(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength))) replay.push(row);
        send({ kind: "ack" });
      } else if (m.kind === "rows") {
        for (const row of m.rows) replay.push(row);
        send({ kind: "ack" });
      } else {
        send({ kind: "done", run: replay.finish() });
        port.close();
      }
    } catch (error) {
      send({ kind: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      port.close();
    }
  });
}
