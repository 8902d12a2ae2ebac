import { type ClaimedProbe, claimDueProbesWithContext, errorSummary } from "@linewatch/db";
import type { AppDeps } from "../deps";
import type { RegistrySnapshot } from "../registry-cache";
import { DEFAULT_TIMEOUT_MS } from "./run-probe";

/**
 * The prober's slots and its claims of due work from the shared schedule (so replicas never double
 * up). A slot is taken from the claim (or a manual probe's start) until its probe is scored or
 * dropped; freed slots are refilled at once while due work remains, so throughput is bounded by
 * `maxInFlight` ÷ latency, not by the one-second tick.
 */
export class DueClaims {
  /** The claim under way (ticks and refills take turns), and whether the last one left due work behind. */
  private claiming: Promise<number> | null = null;
  private moreDue = false;
  /** Probes claimed or asked for and not yet sent, plus those being sent. */
  private busy = 0;
  private stopped = false;
  private leaseOf: { snapshot: RegistrySnapshot; ms: number } | null = null;
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger" | "config">,
    private readonly registry: { get(): Promise<RegistrySnapshot> },
    private readonly replica: string,
    private readonly work: {
      /** Before a claimed batch goes out (one query at most, e.g. baselines). */
      prepare(claimed: ClaimedProbe[]): Promise<void>;
      /** Send and store one claimed probe; its slot is let go when it is sent or dropped. */
      run(row: ClaimedProbe): Promise<void>;
    },
  ) {}

  /** Whether the prober is closing (no more claims, no more retries). */
  get closed(): boolean {
    return this.stopped;
  }

  /** Take `n` slots for probes sent outside the schedule (a manual probe). */
  reserve(n: number): void {
    this.busy += n;
  }

  /**
   * A slot is free again: if the last claim left due work behind, claim again once a quarter of the
   * slots is free (not one query per finished probe).
   */
  release(): void {
    this.busy--;
    if (!this.moreDue || this.claiming || this.stopped) return;
    if (this.freeSlots() < Math.max(1, Math.ceil(this.deps.config.maxInFlight / 4)) && this.busy > 0) return;
    this.track(
      this.runDue().catch((error: unknown) => {
        this.moreDue = false; // the next tick tries again
        this.deps.logger.warn("cannot claim due probes", errorSummary(error));
      }),
    );
  }

  /** One scheduler tick: claim what is due, as many as there are free slots, and send it. */
  async runDue(): Promise<number> {
    // Ticks and refills take turns: one claim at a time, each for the slots free when it starts.
    while (this.claiming) await this.claiming.catch(() => 0);
    const claim = this.claimDue();
    this.claiming = claim;
    try {
      return await claim;
    } finally {
      if (this.claiming === claim) this.claiming = null;
    }
  }

  /** Wait for the probes under way (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.drain();
  }

  private async claimDue(): Promise<number> {
    const free = this.freeSlots();
    if (free <= 0 || this.stopped) return 0;
    const now = this.deps.clock.now();
    // The registry is read when there is something to send, not on every idle tick.
    const leaseMs = this.leaseOf?.ms ?? this.leaseMs(await this.registry.get());
    const claimed = await claimDueProbesWithContext(this.deps.database.db, this.replica, new Date(now), new Date(now + leaseMs), free);
    this.busy += claimed.length; // each is let go when its probe is sent or dropped (work.run)
    // A full claim may have left due work behind: refill as slots free up.
    this.moreDue = claimed.length === free;
    if (claimed.length === 0) return 0;
    this.leaseMs(await this.registry.get()); // for the next claim
    await this.work.prepare(claimed);
    for (const row of claimed) this.track(this.work.run(row));
    return claimed.length;
  }

  /** Slots neither sending nor claimed to send. */
  private freeSlots(): number {
    return this.deps.config.maxInFlight - this.busy;
  }

  /**
   * The lease covers the longest timeout a probe may take, plus slack for storing the result; kept
   * per registry snapshot (a claim uses the one of the snapshot the previous claim saw). It is the
   * backstop: a dead replica's claims are released sooner through the heartbeats (heartbeat.ts).
   */
  private leaseMs(snapshot: RegistrySnapshot): number {
    if (this.leaseOf?.snapshot !== snapshot) {
      let max = DEFAULT_TIMEOUT_MS;
      for (const l of snapshot.lines.values()) max = Math.max(max, l.timeoutMs ?? 0);
      for (const s of snapshot.samples.values()) max = Math.max(max, s.timeoutMs ?? 0);
      this.leaseOf = { snapshot, ms: max + 30_000 };
    }
    return this.leaseOf.ms;
  }

  private track(task: Promise<unknown>): void {
    this.running.add(task);
    void task.finally(() => this.running.delete(task));
  }
}
