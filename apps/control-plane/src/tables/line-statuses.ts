import { type Health, type HealthPolicy, type LineStatus, linePolicy, lineStatus } from "@linewatch/core";
import type { ChangedHealth } from "@linewatch/db";
import type { CachedLine } from "../registry-cache";
import type { LinesGone, SnapshotIndex } from "./snapshot-index";

/** What a table takes from a line's status; the same object while its inputs stay the same. */
export interface LineTableStatus {
  adminState: string;
  policy: HealthPolicy;
  state: LineStatus["state"];
  factor: number;
}

/** A line's health as last read, and the status worked out from it (recomputed when an input moves). */
export interface HealthEntry {
  revision: number | null;
  health: Health | null;
  status: LineTableStatus | null;
}

/** Health read in a recompute's transaction; held only once it commits. */
export class HealthRead {
  private readonly read: Map<string, HealthEntry>;

  constructor(
    changed: ChangedHealth[],
    private readonly held: ReadonlyMap<string, HealthEntry>,
  ) {
    this.read = new Map(changed.map((h) => [h.lineId, { revision: h.revision, health: h.health, status: null }]));
  }

  /** The line's entry: as read now, else as held; a line without a row (never probed) has its initial health. */
  entryOf(id: string): HealthEntry {
    let entry = this.read.get(id) ?? this.held.get(id);
    if (!entry) {
      entry = { revision: null, health: null, status: null };
      this.read.set(id, entry);
    }
    return entry;
  }

  /** What this read brought that was not held (to keep once the transaction commits). */
  entries(): Iterable<[string, HealthEntry]> {
    return this.read;
  }
}

/**
 * The lines' health as this replica last read it, with the status each gives a table: a recompute
 * reads only the rows whose revision moved since, and works a status out again only when its
 * inputs moved.
 */
export class LineStatuses implements LinesGone {
  private readonly health = new Map<string, HealthEntry>();

  /** The held revision of each line (null: none held), and the entries held, to read the rest under a route's lock. */
  held(lineIds: readonly string[]): { revisions: (number | null)[]; entries: Map<string, HealthEntry> } {
    const entries = new Map<string, HealthEntry>();
    const revisions = lineIds.map((id) => {
      const entry = this.health.get(id);
      if (entry) entries.set(id, entry);
      return entry?.revision ?? null;
    });
    return { revisions, entries };
  }

  /** A committed recompute read these. */
  keep(read: HealthRead): void {
    for (const [id, entry] of read.entries()) this.health.set(id, entry);
  }

  retain(lines: ReadonlyMap<string, unknown>): void {
    for (const id of this.health.keys()) if (!lines.has(id)) this.health.delete(id);
  }

  forget(lineId: string): void {
    this.health.delete(lineId);
  }
}

/**
 * One status per line: the admin state (the registry's; health's overlay may lag a moment behind a
 * PATCH) over health. Worked out again only when the health read, the admin state or the policy
 * moved: `now` only dates the initial health of a line never probed, which the state and factor do
 * not depend on.
 */
export function tableStatusOf(line: CachedLine, index: SnapshotIndex, entry: HealthEntry, now: number): LineTableStatus {
  const policy = index.policyOf.get(line.id) ?? linePolicy(line, index.snapshot.routes);
  const held = entry.status;
  if (held && held.adminState === line.adminState && held.policy === policy) return held;
  const s = lineStatus(line.adminState, entry.health, policy, now);
  entry.status = { adminState: line.adminState, policy, state: s.state, factor: s.factor };
  return entry.status;
}
