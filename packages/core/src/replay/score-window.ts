// A line's recent results for its line score, as the replay keeps them: three parallel ring arrays
// of numbers instead of an object per result. `score(now)` is `lineScore` over the same results in
// the same order (the sums run in the same order, so the rounding is the same to the last bit).
import { roundTo } from "../scoring/numbers";

export class ScoreWindow {
  private at = new Float64Array(64);
  private scores = new Float64Array(64);
  private weights = new Float64Array(64);
  private head = 0;
  private size = 0;

  constructor(private readonly windowMs: number) {}

  get length(): number {
    return this.size;
  }

  /** Adds a result; `weight` as `lineScore` takes it (undefined: 1). */
  push(startedAt: number, score: number, weight: number | undefined): void {
    if (this.size === this.at.length) this.grow();
    const i = (this.head + this.size) & (this.at.length - 1);
    this.at[i] = startedAt;
    this.scores[i] = score;
    this.weights[i] = weight === undefined ? 1 : Number.isFinite(weight) && weight > 0 ? weight : 0;
    this.size++;
  }

  /** Drops results from the front while they started before the window (the front only). */
  trim(now: number): void {
    const mask = this.at.length - 1;
    while (this.size > 0 && (this.at[this.head] as number) < now - this.windowMs) {
      this.head = (this.head + 1) & mask;
      this.size--;
    }
  }

  /** `lineScore(results, now, windowMs)` over the results held, in the order they came. */
  score(now: number): number | null {
    const mask = this.at.length - 1;
    const lo = now - this.windowMs;
    let sum = 0;
    let total = 0;
    for (let k = 0; k < this.size; k++) {
      const i = (this.head + k) & mask;
      const t = this.at[i] as number;
      const s = this.scores[i] as number;
      if (!(t >= lo && t <= now) || !Number.isFinite(s)) continue;
      const w = this.weights[i] as number;
      sum += w * s;
      total += w;
    }
    return total === 0 ? null : roundTo(sum / total, 1);
  }

  private grow(): void {
    const n = this.at.length * 2;
    const copy = (xs: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
      const next = new Float64Array(n);
      for (let k = 0; k < this.size; k++) next[k] = xs[(this.head + k) & (xs.length - 1)] as number;
      return next;
    };
    this.at = copy(this.at);
    this.scores = copy(this.scores);
    this.weights = copy(this.weights);
    this.head = 0;
  }
}
