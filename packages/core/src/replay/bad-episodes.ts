// Bad episodes: stretches where a line's probes failed, judged by the stored verdicts so they are
// the same whatever policy is replayed. They are what the report measures both timelines against.
import type { ReplayResult } from "./probe-event";

/** Failed probes (without BREAK_PASSES passes between them) that make an episode. */
export const EPISODE_MIN_FAILURES = 2;
/** Consecutive passed probes that end an episode. */
export const EPISODE_BREAK_PASSES = 3;

export interface BadEpisode {
  lineId: string;
  /** Start of its first failed probe. */
  from: number;
  /** End of its last failed probe. */
  to: number;
  failedProbes: number;
}

interface Open {
  from: number;
  to: number;
  failures: number;
  passes: number;
}

export class BadEpisodeTracker {
  private readonly open = new Map<string, Open>();
  private readonly done: BadEpisode[] = [];

  /** Results of each line in start order. */
  observe(r: ReplayResult): void {
    const cur = this.open.get(r.lineId);
    const failed = r.hardFailure || !r.passed;
    if (failed) {
      const end = r.startedAt + Math.max(0, r.latencyMs);
      if (cur) {
        cur.failures++;
        cur.to = Math.max(cur.to, end);
        cur.passes = 0;
      } else this.open.set(r.lineId, { from: r.startedAt, to: end, failures: 1, passes: 0 });
      return;
    }
    if (!cur) return;
    if (++cur.passes >= EPISODE_BREAK_PASSES) this.close(r.lineId, cur);
  }

  private close(lineId: string, o: Open): void {
    this.open.delete(lineId);
    if (o.failures >= EPISODE_MIN_FAILURES) this.done.push({ lineId, from: o.from, to: o.to, failedProbes: o.failures });
  }

  finish(): BadEpisode[] {
    for (const [lineId, o] of [...this.open]) this.close(lineId, o);
    return BadEpisodeTracker.sortEpisodes(this.done);
  }

  /** The report's order: by start, then line (a line's episodes never start together). */
  static sortEpisodes(episodes: BadEpisode[]): BadEpisode[] {
    return episodes.sort((a, b) => a.from - b.from || (a.lineId < b.lineId ? -1 : a.lineId > b.lineId ? 1 : 0));
  }
}
