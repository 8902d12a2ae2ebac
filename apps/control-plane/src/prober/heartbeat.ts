import { heartbeatAndReleaseDead } from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { ProcessPlace } from "./restart-claims";

/**
 * A replica beats every 2 s (scheduler.ts); one not heard from for REPLICA_STALE_MS is taken for
 * dead and its claims are released, so the probes it had in flight run again within docs/tables.md's
 * bound (2 intervals + timeout) instead of after a lease of the longest timeout + 30 s.
 */
export const REPLICA_STALE_MS = 10_000;

/** This replica's heartbeats, and its judgment of the others'. */
export class ReplicaHeartbeat {
  /** Since when this replica's own heartbeats have gone through without a gap (null: not now). */
  private beatingSince: number | null = null;
  private lastBeat = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger">,
    private readonly replica: string,
    /** Recorded with each beat, so a process restarted on this host can tell this one is gone (restart-claims.ts). */
    private readonly place: ProcessPlace | null = null,
  ) {}

  /**
   * Tell the other replicas this one is alive, and release the claims of those that stopped
   * beating. Only a replica whose own beats have gone through for a whole stale period judges the
   * others: after an outage or a stall of its own, everyone's last beat is old, not only the dead's.
   * Returns how many claims were released.
   */
  async beat(): Promise<number> {
    const now = this.deps.clock.now();
    try {
      const steady = this.beatingSince !== null && now - this.lastBeat < REPLICA_STALE_MS / 2;
      if (!steady) this.beatingSince = now;
      const judge = steady && this.beatingSince !== null && now - this.beatingSince >= REPLICA_STALE_MS;
      const released = await heartbeatAndReleaseDead(
        this.deps.database.db,
        this.replica,
        new Date(now),
        judge ? new Date(now - REPLICA_STALE_MS) : null,
        this.place,
      );
      this.lastBeat = now;
      if (released > 0) this.deps.logger.info("released the claims of replicas that stopped beating", { released });
      return released;
    } catch (error) {
      this.beatingSince = null;
      throw error;
    }
  }
}
