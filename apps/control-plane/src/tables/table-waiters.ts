/**
 * Long-polls waiting for a route's next table version. Each waiter is woken once (a new version, its
 * time up, its client gone, or the publisher stopping) and then leaves: a client that went away
 * holds no timer, listener or entry afterwards.
 */
export class TableWaiters {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Resolve on the route's next `wake`, after `ms`, or when `signal` aborts, whichever comes first. */
  wait(route: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(route) ?? new Set();
      this.waiters.set(route, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done);
      set.add(done);
    });
  }

  /** A newer version of the route is served: every waiter of the route answers now (each reads the newest). */
  wake(route: string): void {
    for (const wake of this.waiters.get(route) ?? []) wake();
  }

  /** How many wait on the route now. */
  count(route: string): number {
    return this.waiters.get(route)?.size ?? 0;
  }

  wakeAll(): void {
    for (const set of this.waiters.values()) for (const wake of set) wake();
  }
}
