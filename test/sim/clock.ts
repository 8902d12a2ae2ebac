// A virtual clock: a queue of timed callbacks run in time order (ties in insertion order). No sleeps.

interface Timer {
  at: number;
  seq: number;
  run: () => void;
}

export class VirtualClock {
  now: number;
  private heap: Timer[] = [];
  private seq = 0;

  constructor(start: number) {
    this.now = start;
  }

  /** Runs `run` at `at` (or now, if `at` has passed). */
  at(at: number, run: () => void): void {
    this.push({ at: Math.max(at, this.now), seq: this.seq++, run });
  }

  /** Runs every callback due up to `until`, callbacks scheduled on the way included; then sets now = until. */
  runUntil(until: number): void {
    while (this.heap.length > 0 && this.heap[0]!.at <= until) {
      const t = this.pop();
      this.now = t.at;
      t.run();
    }
    this.now = Math.max(this.now, until);
  }

  private less(a: Timer, b: Timer): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(t: Timer): void {
    const h = this.heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): Timer {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
