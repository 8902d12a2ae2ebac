/**
 * How a waiter hears that its client went away: `subscribe(onGone)` returns the unsubscribe. The
 * table listener subscribes to the response's `close` (cheaper than an AbortController per poll);
 * the Hono route passes its request's signal through `goneWith`.
 */
export type ClientGone = (onGone: () => void) => () => void;

/** A ClientGone from an AbortSignal. */
export function goneWith(signal: AbortSignal): ClientGone {
  return (onGone) => {
    signal.addEventListener("abort", onGone);
    return () => signal.removeEventListener("abort", onGone);
  };
}

/** Waiters answered per turn when a version wakes them; other requests are served between chunks. */
export const WAKE_CHUNK = 64;

/** One waiting long-poll. `settle` ends it (once): the timer, the client listener and the entry go. */
interface Waiter {
  settle(): void;
}

/**
 * Long-polls waiting for a route's next table version. Each waiter is woken once (a new version, its
 * time up, its client gone, or the publisher stopping) and then leaves: a client that went away
 * holds no timer, listener or entry afterwards.
 *
 * A wake answers its waiters in chunks of WAKE_CHUNK with a turn of the event loop between them, so
 * thousands of routers woken at once do not hold an admin's request behind them. Each waiter reads
 * the newest version when it is answered (a version published mid-wake is not skipped), and a poll
 * that arrives meanwhile waits for the next version (docs/tables.md#serving).
 */
export class TableWaiters {
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** Waiters taken off their route by a wake and not answered yet. */
  private pending: Waiter[][] = [];
  private draining = false;

  /** Resolve on the route's next `wake`, after `ms`, or when the client is gone, whichever comes first. */
  wait(route: string, ms: number, gone?: ClientGone): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiters.get(route);
      if (!set) {
        set = new Set();
        this.waiters.set(route, set);
      }
      const entries = set;
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let unsubscribe: (() => void) | undefined;
      const waiter: Waiter = {
        settle: () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          unsubscribe?.();
          entries.delete(waiter);
          if (entries.size === 0 && this.waiters.get(route) === entries) this.waiters.delete(route);
          resolve();
        },
      };
      entries.add(waiter);
      timer = setTimeout(waiter.settle, ms);
      // A client already gone settles it here, before there is anything to unsubscribe.
      const off = gone?.(waiter.settle);
      if (settled) off?.();
      else unsubscribe = off;
    });
  }

  /** A newer version of the route is served: every waiter of the route answers, chunk by chunk (each reads the newest). */
  wake(route: string): void {
    const set = this.waiters.get(route);
    if (!set || set.size === 0) return;
    // Polls that arrive from now on wait for the next version.
    this.waiters.delete(route);
    this.pending.push([...set]);
    if (!this.draining) {
      this.draining = true;
      this.drain();
    }
  }

  private drain(): void {
    let budget = WAKE_CHUNK;
    while (budget > 0 && this.pending.length > 0) {
      const batch = this.pending[0] as Waiter[];
      const take = batch.splice(0, budget);
      for (const w of take) w.settle();
      budget -= take.length;
      if (batch.length === 0) this.pending.shift();
    }
    if (this.pending.length === 0) this.draining = false;
    else setImmediate(() => this.drain());
  }

  /** How many wait on the route now (not counting those a wake is answering). */
  count(route: string): number {
    return this.waiters.get(route)?.size ?? 0;
  }

  /** Every waiter answers now, in this turn (the publisher is stopping). */
  wakeAll(): void {
    for (const batch of this.pending) for (const w of batch) w.settle();
    this.pending = [];
    for (const set of [...this.waiters.values()]) for (const w of [...set]) w.settle();
  }
}
