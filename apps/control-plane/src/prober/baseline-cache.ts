import { BASELINE_WINDOW, type BaselineEntry } from "@linewatch/core";
import { type Db, sampleHistories } from "@linewatch/db";

export interface HistoryEntry extends BaselineEntry {
  startedAt: number;
}

const keyOf = (lineId: string, sampleId: string) => `${lineId}/${sampleId}`;

/**
 * The latest results of each (line, sample) this replica probes, kept in memory so a probe does not
 * read its baseline from the database. The claim of a batch says, per pair, when its newest stored
 * result started; the pairs never read, or with a newer result than any held (another replica
 * probed them), are read in one query before the batch goes out. So the baseline is the one the
 * table's latest results give, without reading them per probe.
 */
export class BaselineCache {
  private readonly entries = new Map<string, { history: HistoryEntry[]; synced: boolean }>();

  /** One query for all these pairs: load those not held yet, add what others stored since. */
  async sync(db: Db, pairs: { lineId: string; sampleId: string }[]): Promise<void> {
    const keys = new Map<string, { lineId: string; sampleId: string; after: Date | null }>();
    for (const { lineId, sampleId } of pairs) {
      const k = keyOf(lineId, sampleId);
      if (keys.has(k)) continue;
      const e = this.entries.get(k);
      const newest = e?.synced ? e.history[0]?.startedAt : undefined;
      keys.set(k, { lineId, sampleId, after: newest === undefined ? null : new Date(newest) });
    }
    if (keys.size === 0) return;
    const rows = await sampleHistories(db, [...keys.values()], BASELINE_WINDOW);
    const fetched = new Map<string, HistoryEntry[]>();
    for (const { lineId, sampleId, ...entry } of rows) {
      const k = keyOf(lineId, sampleId);
      const list = fetched.get(k) ?? [];
      list.push(entry);
      fetched.set(k, list);
    }
    for (const [k, q] of keys) {
      const got = fetched.get(k) ?? [];
      const e = this.entries.get(k);
      if (!e || q.after === null) {
        // First load (or a pair recorded before it was ever synced): the table's window, plus what this replica recorded meanwhile.
        this.entries.set(k, { history: merge(got, e?.history ?? []), synced: true });
      } else if (got.length > 0) {
        e.history = merge(got, e.history);
      }
    }
  }

  /** The pair's latest results, newest first; empty when never synced (a cold baseline). */
  history(lineId: string, sampleId: string): readonly HistoryEntry[] {
    return this.entries.get(keyOf(lineId, sampleId))?.history ?? [];
  }

  /**
   * Whether a pair must be read before its next probe: never read yet, or the table holds a result
   * newer than any held here (`newestStored`, ms; another replica probed it).
   */
  needsSync(lineId: string, sampleId: string, newestStored: number | null): boolean {
    const e = this.entries.get(keyOf(lineId, sampleId));
    if (!e?.synced) return true;
    if (newestStored === null) return false;
    const newestHeld = e.history[0]?.startedAt;
    return newestHeld === undefined || newestStored > newestHeld;
  }

  /** A result this replica just stored. */
  record(lineId: string, sampleId: string, entry: HistoryEntry): void {
    const k = keyOf(lineId, sampleId);
    const e = this.entries.get(k);
    if (e) e.history = merge([entry], e.history);
    else this.entries.set(k, { history: [entry], synced: false });
  }

  /** Forget pairs no longer probed (deleted lines or samples). */
  retain(keep: (lineId: string, sampleId: string) => boolean): void {
    for (const k of this.entries.keys()) {
      const [lineId, sampleId] = k.split("/") as [string, string];
      if (!keep(lineId, sampleId)) this.entries.delete(k);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/** A result as both its in-memory record and its row know it. */
const sameResult = (h: HistoryEntry) => `${h.startedAt}/${h.latencyMs}/${h.contentHash}`;

/** Newest first, at most a baseline window, each result once; `a` and `b` each newest first. */
function merge(a: readonly HistoryEntry[], b: readonly HistoryEntry[]): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  const seen = new Set<string>();
  let i = 0;
  let j = 0;
  while (out.length < BASELINE_WINDOW && (i < a.length || j < b.length)) {
    const x = a[i];
    const y = b[j];
    let next: HistoryEntry;
    if (x !== undefined && (y === undefined || x.startedAt >= y.startedAt)) {
      next = x;
      i++;
    } else if (y !== undefined) {
      next = y;
      j++;
    } else break; // both done: the loop condition says this cannot happen
    const key = sameResult(next);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(next);
  }
  return out;
}
