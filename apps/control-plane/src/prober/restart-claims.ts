import { hostname } from "node:os";
import { releaseReplicas, replicasOnHost } from "@linewatch/db";
import type { AppDeps } from "../deps";

/** Where this process runs, as replicas record it (replicas.host, replicas.pid). */
export interface ProcessPlace {
  host: string;
  pid: number;
}

export const thisProcess = (): ProcessPlace => ({ host: hostname(), pid: process.pid });

/** The replicas running in this process (tests run several): a row with this pid is one of them or a previous life. */
const runningHere = new Set<string>();

/** This process runs `replica` until the returned function is called. */
export function runsHere(replica: string): () => void {
  runningHere.add(replica);
  return () => runningHere.delete(replica);
}

/** Whether a process with this pid exists on this host (signal 0 checks without sending; EPERM: it exists, someone else's). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The restart rule (docs/tables.md#probe-frequency): of the replicas recorded on this host, those
 * whose process is gone. A replica with this process's own pid that this process does not run is a
 * previous life (two processes never share a pid: a container restarted as pid 1 again); one with
 * another pid is gone when no process has that pid. This replica's own id is left out (its previous
 * life's claims go with releaseClaimsOf), and so is a replica that recorded no pid (an older version:
 * its heartbeats decide).
 */
export function goneOnThisHost(
  rows: readonly { id: string; pid: number | null }[],
  self: ProcessPlace & { id: string },
  alive: (pid: number) => boolean,
  here: ReadonlySet<string> = runningHere,
): string[] {
  return rows.filter((r) => r.id !== self.id && r.pid !== null && (r.pid === self.pid ? !here.has(r.id) : !alive(r.pid))).map((r) => r.id);
}

/**
 * At start: take over at once the claims of replicas on this host whose process is gone (killed,
 * crashed), instead of waiting for their heartbeats to go stale (REPLICA_STALE_MS, then a steady
 * stale period of this replica's own): a probe the dead process had claimed runs again on the next
 * tick, within 2 intervals + its timeout. Returns how many claims were released.
 */
export async function takeOverGoneReplicas(
  deps: Pick<AppDeps, "database" | "logger">,
  self: ProcessPlace & { id: string },
  alive: (pid: number) => boolean = pidAlive,
): Promise<number> {
  const rows = await replicasOnHost(deps.database.db, self.host);
  const gone = goneOnThisHost(rows, self, alive);
  if (gone.length === 0) return 0;
  const released = await releaseReplicas(deps.database.db, gone);
  deps.logger.info("took over the claims of replicas on this host whose process is gone", { replicas: gone, released });
  return released;
}
