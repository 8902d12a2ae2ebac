import { contentLengthBins, type Db, type LengthBin, type LineBucket, lineBuckets } from "@linewatch/db";

/**
 * The per-line, per-bucket aggregates of one time window, kept between page views. The first view
 * reads the whole window; later ones re-read only the buckets a probe can still land in (a result is
 * stored when its probe ends, up to its timeout after it started) and drop those that left the window.
 * With 200 lines and 6 hours that is a few thousand rows per refresh instead of ~400 000 (per line, bucket
 * and sample: the score over a bucket is core's summedLineScore of them).
 */
export class WindowAggregates {
  private buckets = new Map<string, LineBucket>();
  private bins = new Map<string, LengthBin>();
  /** Results that started before this (minus the late margin) are all in the maps already. */
  private readUntil: number | null = null;

  constructor(
    readonly bucketMs: number,
    readonly heatMs: number,
  ) {}

  /**
   * Bring the maps up to `now` for a window starting at `start`. `lateMs`: how long after its start a
   * probe's result may still be stored (the longest timeout in use, plus slack).
   */
  async refresh(db: Db, start: number, now: number, lateMs: number): Promise<void> {
    const from = (size: number) => (this.readUntil === null ? start : Math.max(start, Math.floor((this.readUntil - lateMs) / size) * size));
    const bucketsFrom = from(this.bucketMs);
    const binsFrom = from(this.heatMs);
    // One after another: PGlite runs one query at a time anyway, and PostgreSQL keeps a connection free for probes.
    const buckets = await lineBuckets(db, new Date(bucketsFrom), this.bucketMs);
    const bins = await contentLengthBins(db, new Date(binsFrom), this.heatMs);
    for (const [k, b] of this.buckets) if (b.at >= bucketsFrom || b.at < start) this.buckets.delete(k);
    for (const [k, b] of this.bins) if (b.at >= binsFrom || b.at < start) this.bins.delete(k);
    for (const b of buckets) this.buckets.set(`${b.lineId} ${b.at} ${b.sampleId}`, b);
    for (const b of bins) this.bins.set(`${b.lineId} ${b.at} ${b.bin}`, b);
    this.readUntil = now;
  }

  snapshot(): { buckets: LineBucket[]; bins: LengthBin[] } {
    return { buckets: [...this.buckets.values()], bins: [...this.bins.values()] };
  }
}
