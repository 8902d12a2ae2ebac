/**
 * Group commit: callers add one item at a time and wait for it; items that arrive while a flush is
 * under way go together in the next one. Idle, an item is flushed on its own at once (no added
 * latency); under load (the last batch held more than one item) a batch waits `lingerMs` for more,
 * so the database sees a few statements per second instead of one per probe.
 */
export class GroupCommit<I, O> {
  private queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private flushing: Promise<void> | null = null;
  private lastBatch = 0;

  constructor(
    /** Writes a batch; returns one output per item, in order. A throw fails the whole batch. */
    private readonly flush: (items: I[]) => Promise<O[]>,
    private readonly opts: { maxBatch?: number; lingerMs?: number } = {},
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.flushing ??= this.run();
    });
  }

  /** Resolves when everything added so far is flushed. */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async run(): Promise<void> {
    // Items added in the same turn of the event loop (a burst of answers) go in one batch.
    await new Promise<void>((r) => setImmediate(r));
    try {
      while (this.queue.length > 0) {
        const linger = this.opts.lingerMs ?? 0;
        if (linger > 0 && this.lastBatch > 1) await new Promise<void>((r) => setTimeout(r, linger));
        const batch = this.queue.splice(0, this.opts.maxBatch ?? 500);
        this.lastBatch = batch.length;
        try {
          const out = await this.flush(batch.map((b) => b.item));
          for (const [i, b] of batch.entries()) b.resolve(out[i] as O);
        } catch (error) {
          for (const b of batch) b.reject(error);
        }
      }
    } finally {
      this.flushing = null;
    }
  }
}
