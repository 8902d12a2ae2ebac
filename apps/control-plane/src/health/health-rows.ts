import { type HealthPolicy, lineStatus, newLineHealth } from "@linewatch/core";
import { type Database, ensureLinesHealth } from "@linewatch/db";
import type { CachedLine } from "../registry-cache";

/** Lines' health rows: each created once with core's new-line health, unprobed (never per event). */
export class HealthRows {
  /** Lines whose health row is known to exist. */
  private readonly known = new Set<string>();

  constructor(private readonly database: Pick<Database, "db">) {}

  /** Create the rows of these lines that may be missing (concurrent creators: one wins, nobody fails). */
  async ensure(lines: readonly CachedLine[], policyOf: (line: CachedLine) => HealthPolicy, now: number): Promise<void> {
    const missing = lines.filter((line) => !this.known.has(line.id));
    if (missing.length === 0) return;
    await ensureLinesHealth(
      this.database.db,
      missing.map((line) => ({
        lineId: line.id,
        health: newLineHealth(now, line.adminState, policyOf(line)),
        // A line never probed: its status as core gives it (null health).
        state: lineStatus(line.adminState, null, policyOf(line), now).state,
        now: new Date(now),
      })),
    );
    for (const line of missing) this.known.add(line.id);
  }

  /** The row is gone (its line was deleted). */
  forget(lineId: string): void {
    this.known.delete(lineId);
  }
}
