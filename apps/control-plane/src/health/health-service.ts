import {
  type AdminState,
  applicableSamples,
  failSafeCooldown,
  type Health,
  type HealthEffect,
  type HealthEvent,
  type HealthPolicy,
  initialHealth,
  LINE_SCORE_WINDOW_MS,
  type LiveEvidence,
  linePolicy,
  lineScore,
  lineStatus,
  nextTickAt,
  probeIntervalMs,
  servicePhase,
  transition,
  weightFactor,
} from "@linewatch/core";
import {
  type Db,
  dueHealthTicks,
  type EventInsert,
  ensureLineHealth,
  ensureLinesHealth,
  expediteProbe,
  getLineHealth,
  insertEvents,
  type LineHealthWrite,
  lockLineHealth,
  readHealthForProbes,
  type StoredProbeResult,
  setFastProbing,
  writeHealthIfUnchanged,
  writeLineHealth,
} from "@linewatch/db";
import type { AppDeps } from "../deps";
import { GroupCommit } from "../prober/group-commit";
import type { CachedLine, RegistryCache, RegistrySnapshot } from "../registry-cache";
import type { TablePublisher } from "../tables/publisher";
import { HealthFaults } from "./health-faults";

/** What the shell does with a health effect's event: its row in the timeline. */
function eventRow(lineId: string, lineName: string, effect: HealthEffect, now: number, dedupeKey: string): EventInsert | null {
  switch (effect.kind) {
    case "state_change":
    case "weight_change":
    case "trend_alert": {
      const { kind, from, to, probeIds } = effect;
      const trend = kind === "trend_alert";
      return {
        at: new Date(now),
        kind,
        lineId,
        routeName: null,
        reason: trend ? effect.detail : `${effect.reason}: ${effect.detail}`,
        data: { line: lineName, from, to, ...(trend ? { windowMs: effect.windowMs } : {}), probeIds },
        dedupeKey,
      };
    }
    default:
      return null;
  }
}

/** When a fail-safe health's cooldown ends: its one tick (nextTickAt is core's, and core is what failed). */
function cooldownEnd(health: Health): number | null {
  const op = servicePhase(health);
  return op.state === "cooldown" ? op.until : null;
}

/** An event the health machine could not apply to a line (counted in HealthFaults). */
export class UnappliedEvent extends Error {
  constructor(line: string, type: HealthEvent["type"], cause: unknown) {
    super(`cannot apply a ${type} event to line ${line}`, { cause });
    this.name = "UnappliedEvent";
  }
}

/** Reads and writes of a batch before giving up on lines whose health keeps changing under it. */
const CAS_ATTEMPTS = 5;

/** A line of the batch's snapshot: applyProbes only keeps results whose line the snapshot has. */
function lineIn(snapshot: RegistrySnapshot, id: string): CachedLine {
  const line = snapshot.lines.get(id);
  if (!line) throw new Error(`line ${id} is not in the registry snapshot its batch was grouped by`);
  return line;
}

interface Moved {
  line: CachedLine;
  before: Health;
  health: Health;
  effects: HealthEffect[];
}

/**
 * The shell around core's state machine: load a line's health, apply events, persist the new health
 * with its events atomically, then act on the other effects (a confirming probe, a table republish).
 *
 * Admin changes and time-driven ticks go one line at a time under a row lock. Probe results, the
 * hot path, go in group commits: the results that arrive while one batch is being written are
 * applied together, each line's in arrival order, with two statements per batch: one reads the
 * lines' health and line-score inputs, one writes health and events back where the revision is
 * still the one read (compare-and-set; lines somebody wrote meanwhile are read and applied again).
 * A batch that fails is retried one result at a time, so one bad line cannot hold back the others.
 */
export class HealthService {
  /** Lines whose health row is known to exist (created once, never per probe). */
  private readonly known = new Set<string>();
  private policies: {
    snapshot: RegistrySnapshot;
    byLine: Map<string, { policy: HealthPolicy; intervalMs: number; fastIntervalMs: number }>;
  } | null = null;
  private readonly probes: GroupCommit<StoredProbeResult, { error?: unknown; moved?: Moved }>;
  /** Results it could not apply, and the lines the fail-safe took out (/readyz, metrics). */
  readonly faults: HealthFaults;
  /** Core's state machine; replaceable in tests, to inject a fault the fail-safe must hold against. */
  transition: typeof transition = transition;

  constructor(
    private readonly deps: Pick<AppDeps, "database" | "clock" | "logger" | "config">,
    private readonly registry: RegistryCache,
    private readonly publisher: TablePublisher,
  ) {
    this.faults = new HealthFaults(deps.logger);
    this.probes = new GroupCommit(
      async (results): Promise<{ error?: unknown; moved?: Moved }[]> => {
        // Results whose health is written (with what to do next, for a line's last one) survive a
        // failure later in the batch; the others are tried again one by one.
        const applied = new Map<StoredProbeResult, Moved | null>();
        const errors = new Map<StoredProbeResult, unknown>();
        try {
          await this.applyProbes(results, applied);
        } catch (error) {
          const only = results.length === 1 ? results[0] : undefined;
          if (only) errors.set(only, error);
          else for (const r of results) if (!applied.has(r)) await this.applyProbes([r], applied).catch((e: unknown) => errors.set(r, e));
        }
        return results.map((r) => (errors.has(r) ? { error: errors.get(r) } : { moved: applied.get(r) ?? undefined }));
      },
      { lingerMs: deps.config.batchLingerMs },
    );
  }

  /** Resolves once the result is applied: health written, confirming probe asked for, tables republished. */
  async applyProbe(result: StoredProbeResult): Promise<void> {
    const { error, moved } = await this.probes.add(result);
    if (error) {
      const line = (await this.registry.get()).lines.get(result.lineId);
      this.faults.record({ id: result.lineId, name: line?.name ?? result.lineId }, 1, error, this.deps.clock.now(), false);
      throw error;
    }
    // Outside the batch: the next batch need not wait for this one's republish.
    if (moved) await this.afterTransition(moved);
  }

  /**
   * Apply a batch: read the lines' health with their line-score inputs (one statement), run core's
   * transitions, write health and events back (one statement) where nobody wrote meanwhile, and
   * go again for the lines somebody did. For each line, its last result carries what to do next.
   */
  private async applyProbes(results: StoredProbeResult[], applied: Map<StoredProbeResult, Moved | null>): Promise<void> {
    const snapshot = await this.registry.get();
    const db = this.deps.database.db;
    const byLine = new Map<string, StoredProbeResult[]>();
    for (const r of results) {
      if (!snapshot.lines.has(r.lineId)) {
        applied.set(r, null); // deleted meanwhile
        continue;
      }
      const list = byLine.get(r.lineId) ?? [];
      list.push(r);
      byLine.set(r.lineId, list);
    }
    let pending = [...byLine.keys()].sort();
    if (pending.length === 0) return;
    const missing = pending.filter((id) => !this.known.has(id));
    if (missing.length > 0) {
      const now = this.deps.clock.now();
      await ensureLinesHealth(
        db,
        missing.map((id) => {
          const adminState = lineIn(snapshot, id).adminState;
          return {
            lineId: id,
            health: initialHealth(now, adminState),
            state: adminState === "active" ? "healthy" : adminState,
            now: new Date(now),
          };
        }),
      );
      for (const id of missing) this.known.add(id);
    }
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > CAS_ATTEMPTS) throw new Error(`health of ${pending.length} line(s) kept changing under this batch`);
      const now = this.deps.clock.now();
      const rows = await readHealthForProbes(db, pending, new Date(now - LINE_SCORE_WINDOW_MS), new Date(now));
      const read = new Set(rows.map((row) => row.lineId));
      for (const id of pending) {
        if (read.has(id)) continue;
        this.known.delete(id); // gone (line deleted): nothing to apply
        for (const r of byLine.get(id) ?? []) applied.set(r, null);
      }
      const writes: (LineHealthWrite & { lineId: string; expectedRevision: number })[] = [];
      const eventRows: EventInsert[] = [];
      const moved = new Map<string, Moved>();
      const dropped = new Set<string>();
      for (const row of rows) {
        const line = lineIn(snapshot, row.lineId);
        const { policy, intervalMs } = this.policyOf(snapshot, line);
        // core's lineScore over per-sample sums: n results of mean m count as one of weight w·n (Σ w·score is the same).
        const score = lineScore(
          row.sums.map((x) => ({
            startedAt: now,
            score: x.scoreSum / x.count,
            weight: (Number.isFinite(x.weight) && x.weight > 0 ? x.weight : 0) * x.count,
          })),
          now,
        );
        const before = row.health ?? initialHealth(now, line.adminState);
        const mine = byLine.get(row.lineId) ?? [];
        const judged = this.judgeProbes(line, before, mine, { policy, intervalMs, score, now });
        if (!judged) {
          for (const r of mine) applied.set(r, null); // counted; nothing to write
          dropped.add(line.id);
          continue;
        }
        const { health, effects, state, tickAt } = judged;
        const revision = row.revision + judged.steps;
        judged.events.forEach(({ effect, step, index }) => {
          const ev = eventRow(line.id, line.name, effect, now, `line:${line.id}:${row.revision + step}:${index}`);
          if (ev) eventRows.push(ev);
        });
        writes.push({
          lineId: line.id,
          expectedRevision: row.revision,
          health,
          state,
          score: health.lineScore,
          revision,
          tickAt: tickAt === null ? null : new Date(tickAt),
          updatedAt: new Date(now),
        });
        moved.set(line.id, { line, before, health, effects });
      }
      const written = await writeHealthIfUnchanged(db, writes, eventRows);
      for (const id of written) {
        const mine = byLine.get(id) ?? [];
        for (const [i, r] of mine.entries()) applied.set(r, i === mine.length - 1 ? (moved.get(id) ?? null) : null);
      }
      pending = rows.map((row) => row.lineId).filter((id) => !written.has(id) && !dropped.has(id));
    }
  }

  /**
   * Core's transitions for one line's results of a batch, with what to write. When they cannot be
   * applied (a fault in the health code or in the line's record), the fail-safe: a line with a
   * failing result among them goes to cooldown; passing ones are dropped (null). Both are counted.
   */
  private judgeProbes(
    line: CachedLine,
    before: Health,
    results: StoredProbeResult[],
    at: { policy: HealthPolicy; intervalMs: number; score: number | null; now: number },
  ): {
    health: Health;
    effects: HealthEffect[];
    events: { effect: HealthEffect; step: number; index: number }[];
    steps: number;
    state: string;
    tickAt: number | null;
  } | null {
    const { policy, intervalMs, score, now } = at;
    try {
      let health = before;
      const effects: HealthEffect[] = [];
      const events: { effect: HealthEffect; step: number; index: number }[] = [];
      for (const [i, result] of results.entries()) {
        const step = this.transition(health, { type: "probe", result, lineScore: score ?? result.score, intervalMs }, policy, now);
        events.push(...step.effects.map((effect, index) => ({ effect, step: i + 1, index })));
        effects.push(...step.effects);
        health = step.health;
      }
      const tickAt = nextTickAt(health, policy);
      if (tickAt !== null && !Number.isFinite(new Date(tickAt).getTime())) throw new RangeError(`next tick at ${tickAt} is not a time`);
      return { health, effects, events, steps: results.length, state: lineStatus(line.adminState, health, policy, now).state, tickAt };
    } catch (error) {
      const failed = results.filter((r) => !r.passed);
      this.faults.record(line, results.length, error, now, failed.length > 0);
      if (failed.length === 0) return null;
      const safe = failSafeCooldown(before, line.adminState, policy, now, {
        detail: `${failed.length} failing result(s) could not be applied`,
        probeIds: failed.map((r) => r.id),
      });
      return {
        ...safe,
        events: safe.effects.map((effect, index) => ({ effect, step: 1, index })),
        steps: 1,
        state: safe.health.phase.state,
        tickAt: cooldownEnd(safe.health),
      };
    }
  }

  /** A line's health policy and probe interval, worked out once per registry snapshot. */
  private policyOf(snapshot: RegistrySnapshot, line: CachedLine): { policy: HealthPolicy; intervalMs: number; fastIntervalMs: number } {
    if (this.policies?.snapshot !== snapshot) this.policies = { snapshot, byLine: new Map() };
    let entry = this.policies.byLine.get(line.id);
    if (!entry) {
      const samples = applicableSamples(line, snapshot.samples.values()).length;
      const interval = probeIntervalMs(line, samples);
      const fast = probeIntervalMs(line, samples, { fast: true });
      const intervalMs = Number.isFinite(interval) ? interval : 45_000;
      entry = { policy: linePolicy(line, snapshot.routes), intervalMs, fastIntervalMs: Number.isFinite(fast) ? fast : intervalMs };
      this.policies.byLine.set(line.id, entry);
    }
    return entry;
  }

  /**
   * A judgment of the line's live traffic (SPEC §9): the health machine counts it next to the
   * probes; its confirming probes arrive as probe results of their own.
   */
  async applyLive(lineId: string, evidence: LiveEvidence): Promise<void> {
    const { verdict, probes } = evidence;
    if (!verdict.suspect) {
      // A clean judgment only ends a suspect spell: a line with none (the usual case, at every report
      // of every router) costs one read, not a locked write. Timers are the ticks' work either way.
      const row = await getLineHealth(this.deps.database.db, lineId);
      if (row?.health && row.health.liveSuspectSince === null) return;
    }
    await this.step(lineId, async () => ({
      type: "live",
      suspect: verdict.suspect,
      reason: verdict.reason,
      probeIds: probes.filter((p) => !p.passed).map((p) => p.id),
    }));
  }

  async applyAdmin(lineId: string, adminState: AdminState): Promise<void> {
    await this.step(lineId, async () => ({ type: "admin", adminState }));
  }

  /** Time-driven transitions (cooldown over, probation step, hold expiry) of every line that is due. */
  async runTicks(limit = 200): Promise<number> {
    const due = await dueHealthTicks(this.deps.database.db, new Date(this.deps.clock.now()), limit);
    for (const lineId of due) {
      // One line whose tick cannot be applied (counted in faults) must not hold back the others.
      await this.step(lineId, async () => ({ type: "tick" })).catch((error: unknown) => {
        if (!(error instanceof UnappliedEvent)) throw error;
      });
    }
    return due.length;
  }

  private async step(lineId: string, makeEvent: (tx: Db, now: number) => Promise<HealthEvent>): Promise<void> {
    const snapshot = await this.registry.get();
    const line = snapshot.lines.get(lineId);
    if (!line) return; // deleted meanwhile
    const policy = linePolicy(line, snapshot.routes);
    const db = this.deps.database.db;
    const now = this.deps.clock.now();
    await ensureLineHealth(
      db,
      lineId,
      initialHealth(now, line.adminState),
      line.adminState === "active" ? "healthy" : line.adminState,
      new Date(now),
    );

    const outcome = await db.transaction(async (txRaw) => {
      const tx = txRaw as unknown as Db;
      const row = await lockLineHealth(tx, lineId);
      if (!row) return null;
      const before = row.health ?? initialHealth(now, line.adminState);
      const event = await makeEvent(tx, now);
      let judged: { health: Health; effects: HealthEffect[]; tickAt: number | null };
      try {
        const step = this.transition(before, event, policy, now);
        judged = { ...step, tickAt: nextTickAt(step.health, policy) };
        if (judged.tickAt !== null && !Number.isFinite(new Date(judged.tickAt).getTime())) throw new RangeError("next tick is not a time");
      } catch (error) {
        // Live traffic saying the line fails is a failing result too: the fail-safe takes it out.
        const failing = event.type === "live" && event.suspect;
        this.faults.record(line, 1, error, now, failing);
        if (!failing) throw new UnappliedEvent(line.name, event.type, error);
        const safe = failSafeCooldown(before, line.adminState, policy, now, {
          detail: `live evidence could not be applied (${event.reason})`,
          probeIds: event.probeIds,
        });
        judged = { ...safe, tickAt: cooldownEnd(safe.health) };
      }
      const { health, effects, tickAt } = judged;
      const revision = row.revision + 1;
      await writeLineHealth(tx, lineId, {
        health,
        state: lineStatus(line.adminState, health, policy, now).state,
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
    await this.afterTransition({ line, ...outcome });
  }

  /** The effects that are not rows: confirming probes, and a republish when the line's weight or state moved. */
  private async afterTransition({ line, before, health, effects }: Moved): Promise<void> {
    const lineId = line.id;
    for (const e of effects) {
      if (e.kind === "reprobe") await expediteProbe(this.deps.database.db, lineId, e.sampleId, new Date(e.at), "confirm");
      if (e.kind === "fast_probe_until") {
        const { intervalMs, fastIntervalMs } = this.policyOf(await this.registry.get(), line);
        // Pending probes come forward by what the fast interval saves.
        const now = new Date(this.deps.clock.now());
        await setFastProbing(this.deps.database.db, lineId, new Date(e.until), now, intervalMs - fastIntervalMs);
      }
    }
    const moved = weightFactor(before) !== weightFactor(health) || before.phase.state !== health.phase.state;
    if (moved) {
      const cause = effects.find((e) => e.kind === "weight_change" || e.kind === "state_change");
      await this.publisher.recompute(
        line.routes.map((r) => r.route),
        cause && "reason" in cause
          ? { reason: `${line.name}: ${cause.reason}`, probeIds: cause.probeIds }
          : { reason: `${line.name}: health`, probeIds: [] },
      );
    }
  }
}
