import {
  type AdminState,
  type Health,
  type HealthEffect,
  type HealthEvent,
  LINE_SCORE_WINDOW_MS,
  describeHealth,
  initialHealth,
  lineScore,
  nextTickAt,
  transition,
  weightFactor,
} from "@linewatch/core";
import {
  type Db,
  type EventInsert,
  type StoredProbeResult,
  dueHealthTicks,
  ensureLineHealth,
  expediteProbe,
  insertEvents,
  lineResultsSince,
  lockLineHealth,
  writeLineHealth,
} from "@linewatch/db";
import type { AppDeps } from "../deps";
import { type RegistryCache, linePolicy } from "../registry-cache";
import type { TablePublisher } from "../tables/publisher";

/** What the shell does with a health effect's event: its row in the timeline. */
function eventRow(lineId: string, lineName: string, effect: HealthEffect, now: number, dedupeKey: string): EventInsert | null {
  const at = new Date(now);
  switch (effect.kind) {
    case "state_change":
      return { at, kind: "state_change", lineId, routeName: null, reason: `${effect.reason}: ${effect.detail}`, data: { line: lineName, from: effect.from, to: effect.to, probeIds: effect.probeIds }, dedupeKey };
    case "weight_change":
      return { at, kind: "weight_change", lineId, routeName: null, reason: `${effect.reason}: ${effect.detail}`, data: { line: lineName, from: effect.from, to: effect.to, probeIds: effect.probeIds }, dedupeKey };
    case "trend_alert":
      return { at, kind: "trend_alert", lineId, routeName: null, reason: effect.detail, data: { line: lineName, from: effect.from, to: effect.to, windowMs: effect.windowMs, probeIds: effect.probeIds }, dedupeKey };
    default:
      return null;
  }
}

/**
 * The shell around core's state machine: load a line's health under a row lock, apply one event,
 * persist the new health with its events in the same transaction, then act on the other effects
 * (a confirming probe, a table republish).
 */
export class HealthService {
  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger">,
    private readonly registry: RegistryCache,
    private readonly publisher: TablePublisher,
  ) {}

  async applyProbe(result: StoredProbeResult): Promise<void> {
    await this.step(result.lineId, async (tx, now) => {
      const recent = await lineResultsSince(tx, result.lineId, new Date(now - LINE_SCORE_WINDOW_MS));
      const score = lineScore(recent, now) ?? result.score;
      return { type: "probe", result, lineScore: score };
    });
  }

  async applyAdmin(lineId: string, adminState: AdminState): Promise<void> {
    await this.step(lineId, async () => ({ type: "admin", adminState }));
  }

  /** Time-driven transitions (cooldown over, probation step, hold expiry) of every line that is due. */
  async runTicks(limit = 200): Promise<number> {
    const due = await dueHealthTicks(this.deps.database.db, new Date(this.deps.clock.now()), limit);
    for (const lineId of due) await this.step(lineId, async () => ({ type: "tick" }));
    return due.length;
  }

  private async step(lineId: string, makeEvent: (tx: Db, now: number) => Promise<HealthEvent>): Promise<void> {
    const snapshot = await this.registry.get();
    const line = snapshot.lines.get(lineId);
    if (!line) return; // deleted meanwhile
    const policy = linePolicy(line, snapshot.routes);
    const db = this.deps.database.db;
    const now = this.deps.clock.now();
    await ensureLineHealth(db, lineId, initialHealth(now, line.adminState) as never, line.adminState === "active" ? "healthy" : line.adminState, new Date(now));

    const outcome = await db.transaction(async (txRaw) => {
      const tx = txRaw as unknown as Db;
      const row = await lockLineHealth(tx, lineId);
      if (!row) return null;
      const before = row.health as unknown as Health;
      const event = await makeEvent(tx, now);
      const { health, effects } = transition(before, event, policy, now);
      const revision = row.revision + 1;
      const tickAt = nextTickAt(health, policy);
      await writeLineHealth(tx, lineId, {
        health: health as never,
        state: describeHealth(health, policy).state,
        score: health.lineScore,
        revision,
        tickAt: tickAt === null ? null : new Date(tickAt),
        updatedAt: new Date(now),
      });
      const rows = effects.flatMap((e, i) => eventRow(lineId, line.name, e, now, `line:${lineId}:${revision}:${i}`) ?? []);
      await insertEvents(tx, rows);
      return { before, health, effects };
    });
    if (!outcome) return;

    for (const e of outcome.effects) {
      if (e.kind === "reprobe") await expediteProbe(db, lineId, e.sampleId, new Date(e.at), "confirm");
    }
    const moved = weightFactor(outcome.before) !== weightFactor(outcome.health) || outcome.before.phase.state !== outcome.health.phase.state;
    if (moved) {
      const cause = outcome.effects.find((e) => e.kind === "weight_change" || e.kind === "state_change");
      await this.publisher.recompute(
        line.routes.map((r) => r.route),
        cause && "reason" in cause ? { reason: `${line.name}: ${cause.reason}`, probeIds: cause.probeIds } : { reason: `${line.name}: health`, probeIds: [] },
      );
    }
  }
}
