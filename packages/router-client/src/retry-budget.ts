// The retry budget (docs/live-evidence.md): retries may not exceed a share of recent requests, so a broad
// outage never multiplies the load on the upstreams. A sliding window of a few buckets; a small
// floor lets a quiet router still retry a stray failure. `now` is an input (ms).

export interface RetryBudgetOptions {
  /** Retries allowed as a share of the window's requests (default 0.2). */
  ratio: number;
  /** Retries always allowed per window, however quiet the router (default 10). */
  minRetries: number;
  /** ms (default 10 000). */
  windowMs: number;
  /** Buckets the window slides by (default 10). */
  buckets: number;
}

export const DEFAULT_RETRY_BUDGET: RetryBudgetOptions = { ratio: 0.2, minRetries: 10, windowMs: 10_000, buckets: 10 };

export class RetryBudget {
  private readonly requests: Float64Array;
  private readonly retries: Float64Array;
  private readonly bucketMs: number;
  /** Index (time / bucketMs) of the newest bucket. */
  private head = -1;
  private sumRequests = 0;
  private sumRetries = 0;
  /** Retries refused because the budget was spent, since the start. */
  exhausted = 0;

  constructor(private readonly options: RetryBudgetOptions = DEFAULT_RETRY_BUDGET) {
    this.requests = new Float64Array(options.buckets);
    this.retries = new Float64Array(options.buckets);
    this.bucketMs = options.windowMs / options.buckets;
  }

  private advance(now: number): number {
    const b = Math.floor(now / this.bucketMs);
    const n = this.options.buckets;
    if (this.head === -1 || b - this.head >= n) {
      this.requests.fill(0);
      this.retries.fill(0);
      this.sumRequests = 0;
      this.sumRetries = 0;
    } else {
      for (let i = this.head + 1; i <= b; i++) {
        const k = i % n;
        this.sumRequests -= this.requests[k] as number;
        this.sumRetries -= this.retries[k] as number;
        this.requests[k] = 0;
        this.retries[k] = 0;
      }
    }
    if (b > this.head) this.head = b;
    return this.head % n;
  }

  /** A client request arrived (counted once, however many attempts it takes). */
  request(now: number): void {
    const k = this.advance(now);
    this.requests[k] = (this.requests[k] as number) + 1;
    this.sumRequests += 1;
  }

  /** Takes one retry from the budget if it has one; false (and counted as exhausted) if spent. */
  tryRetry(now: number): boolean {
    const k = this.advance(now);
    if (this.sumRetries + 1 > Math.max(this.options.minRetries, this.options.ratio * this.sumRequests)) {
      this.exhausted += 1;
      return false;
    }
    this.retries[k] = (this.retries[k] as number) + 1;
    this.sumRetries += 1;
    return true;
  }

  /** Requests and retries in the current window. */
  stats(now: number): { requests: number; retries: number } {
    this.advance(now);
    return { requests: this.sumRequests, retries: this.sumRetries };
  }
}
