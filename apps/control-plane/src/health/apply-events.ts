import {
  failSafeCooldown,
  type Health,
  type HealthEffect,
  type HealthEvent,
  type HealthPolicy,
  lineStatus,
  newLineHealth,
  nextTickAt,
  servicePhase,
  type Transition,
  type transition,
} from "@linewatch/core";
import type { EventInsert, LineHealthWrite } from "@linewatch/db";
import type { CachedLine } from "../registry-cache";
import { healthEventRow } from "./event-rows";
import type { HealthFaults } from "./health-faults";

/** The state machine the shell runs (core's; a test may put a faulty one in) and where its faults are counted. */
export interface HealthMachine {
  transition: typeof transition;
  readonly faults: HealthFaults;
}

/** A line's health that moved, with what to do after it is written (see afterTransition). */
export interface Moved {
  line: CachedLine;
  before: Health;
  health: Health;
  effects: HealthEffect[];
}

/** A line's health write, landing only while its row is still at `expectedRevision` (writeHealthIfUnchanged). */
export interface HealthWrite extends LineHealthWrite {
  lineId: string;
  expectedRevision: number;
}

/** Events to apply to one line's health as read (`health` null: no usable record). */
export interface LineEvents {
  line: CachedLine;
  policy: HealthPolicy;
  row: { health: Health | null; revision: number };
  events: HealthEvent[];
  now: number;
}

/**
 * What applying them gives: the write with its timeline rows, or — when they could not be applied
 * and none of them says the line fails — the error (counted; nothing to write).
 */
export type Applied = { ok: true; write: HealthWrite; eventRows: EventInsert[]; moved: Moved } | { ok: false; error: unknown };

/** When a fail-safe health's cooldown ends: its one tick (nextTickAt is core's, and core is what failed). */
function cooldownEnd(health: Health): number | null {
  const op = servicePhase(health);
  return op.state === "cooldown" ? op.until : null;
}

/** What the fail-safe says of events that could not be applied; null when none of them says the line fails. */
function failingCause(events: readonly HealthEvent[]): { detail: string; probeIds: string[] } | null {
  const failed = events.flatMap((e) => (e.type === "probe" && !e.result.passed ? [e.result.id] : []));
  if (failed.length > 0) return { detail: `${failed.length} failing result(s) could not be applied`, probeIds: failed };
  // Live traffic saying the line fails is a failing result too: the fail-safe takes it out.
  for (const e of events) {
    if (e.type === "live" && e.suspect) return { detail: `live evidence could not be applied (${e.reason})`, probeIds: e.probeIds };
  }
  return null;
}

/** A line's next health: each effect with the step (1-based) it came from, and how many steps the write counts. */
interface Judged extends Transition {
  steps: { effect: HealthEffect; step: number; index: number }[];
  count: number;
  tickAt: number | null;
}

/** Core's transitions, one per event in order. */
function runTransitions(machine: HealthMachine, before: Health, { events, policy, now }: LineEvents): Judged {
  let health = before;
  const effects: HealthEffect[] = [];
  const steps: { effect: HealthEffect; step: number; index: number }[] = [];
  for (const [i, event] of events.entries()) {
    const next = machine.transition(health, event, policy, now);
    steps.push(...next.effects.map((effect, index) => ({ effect, step: i + 1, index })));
    effects.push(...next.effects);
    health = next.health;
  }
  const tickAt = nextTickAt(health, policy);
  if (tickAt !== null && !Number.isFinite(new Date(tickAt).getTime())) throw new RangeError(`next tick at ${tickAt} is not a time`);
  return { health, effects, steps, count: events.length, tickAt };
}

/**
 * The one way events reach a line's health (probe results in batches; live judgments, admin changes
 * and ticks one at a time): core's transitions, and when they cannot be applied (a fault in the health
 * code or in the line's record), the fail-safe (docs/health.md): a line that events say fails goes to
 * cooldown; otherwise nothing is written. Either is counted in the machine's faults.
 */
export function applyEvents(machine: HealthMachine, input: LineEvents): Applied {
  const { line, policy, row, events, now } = input;
  const before = row.health ?? newLineHealth(now, line.adminState, policy);
  let judged: Judged;
  try {
    judged = runTransitions(machine, before, input);
  } catch (error) {
    const cause = failingCause(events);
    machine.faults.record(line, events.length, error, now, cause !== null);
    if (!cause) return { ok: false, error };
    const safe = failSafeCooldown(before, line.adminState, policy, now, cause);
    const steps = safe.effects.map((effect, index) => ({ effect, step: 1, index }));
    judged = { ...safe, steps, count: 1, tickAt: cooldownEnd(safe.health) };
  }
  const { health, effects, steps, count, tickAt } = judged;
  const eventRows = steps.flatMap(
    ({ effect, step, index }) => healthEventRow(line.id, line.name, effect, now, `line:${line.id}:${row.revision + step}:${index}`) ?? [],
  );
  const write: HealthWrite = {
    lineId: line.id,
    expectedRevision: row.revision,
    health,
    state: lineStatus(line.adminState, health, policy, now).state,
    score: health.lineScore,
    revision: row.revision + count,
    tickAt: tickAt === null ? null : new Date(tickAt),
    updatedAt: new Date(now),
  };
  return { ok: true, write, eventRows, moved: { line, before, health, effects } };
}
