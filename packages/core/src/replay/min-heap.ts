// A binary min-heap with a total order, so equal keys still come out in one deterministic order.
export class MinHeap<T> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const xs = this.items;
    xs.push(item);
    let i = xs.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(xs[i] as T, xs[parent] as T)) break;
      [xs[i], xs[parent]] = [xs[parent] as T, xs[i] as T];
      i = parent;
    }
  }

  pop(): T | undefined {
    const xs = this.items;
    const top = xs[0];
    const last = xs.pop();
    if (xs.length === 0 || last === undefined) return top;
    xs[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < xs.length && this.less(xs[l] as T, xs[m] as T)) m = l;
      if (r < xs.length && this.less(xs[r] as T, xs[m] as T)) m = r;
      if (m === i) break;
      [xs[i], xs[m]] = [xs[m] as T, xs[i] as T];
      i = m;
    }
    return top;
  }
}
