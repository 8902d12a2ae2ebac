// What actually happened, from the recorded timeline (the `events` table): state and weight changes
// of lines and table publications of routes, fed into the same TimelineBuilder as the replay.
import { HEALTH_STATES, type HealthState } from "../health/index";
import { TABLE_MODES, type TableMode } from "../tables/index";
import { type ReplayLine, type ReplayRoute, TimelineBuilder, type TimelineStart, type TimelineSummary } from "./timeline";

/** A row of `events` as the replay reads it (times in ms). */
export interface RecordedEvent {
  at: number;
  kind: string;
  lineId: string | null;
  routeName: string | null;
  reason: string;
  data: Record<string, unknown>;
}

const isState = (v: unknown): v is HealthState => typeof v === "string" && (HEALTH_STATES as readonly string[]).includes(v);
const isMode = (v: unknown): v is TableMode => typeof v === "string" && (TABLE_MODES as readonly string[]).includes(v);

/** A table_published event's weights by line id (its data names lines; names are today's). */
function weightsOf(e: RecordedEvent, idByName: ReadonlyMap<string, string>): Map<string, number> {
  const out = new Map<string, number>();
  const list = Array.isArray(e.data.weights) ? e.data.weights : [];
  for (const item of list) {
    if (typeof item !== "object" || item === null) continue;
    const { line, weight } = item as { line?: unknown; weight?: unknown };
    const id = typeof line === "string" ? idByName.get(line) : undefined;
    if (id !== undefined && typeof weight === "number") out.set(id, weight);
  }
  return out;
}

/**
 * Where lines and routes stood when the range starts: the latest state change, weight change and
 * table publication before it (the caller reads those). Lines with none are healthy at full weight,
 * except a line registered within the range (`from` given): it started unprobed at `newLineFactor`
 * of its own (docs/health.md#new-lines).
 */
export function recordedStart(
  before: readonly RecordedEvent[],
  lines: readonly ReplayLine[],
  newLines?: { from: number; factorOf: (lineId: string) => number },
): TimelineStart {
  const idByName = new Map(lines.map((l) => [l.name, l.id]));
  const state = new Map<string, { state: HealthState; factor: number }>();
  if (newLines)
    for (const l of lines)
      if (l.createdAt !== undefined && l.createdAt >= newLines.from)
        state.set(l.id, { state: "unprobed", factor: newLines.factorOf(l.id) });
  const tables = new Map<string, { mode: TableMode; weights: Map<string, number> }>();
  for (const e of [...before].sort((a, b) => a.at - b.at)) {
    if (e.lineId !== null) {
      const cur = state.get(e.lineId) ?? { state: "healthy" as HealthState, factor: 1 };
      if (e.kind === "state_change" && isState(e.data.to)) state.set(e.lineId, { ...cur, state: e.data.to });
      if (e.kind === "weight_change" && typeof e.data.to === "number") state.set(e.lineId, { ...cur, factor: e.data.to });
    }
    if (e.kind === "table_published" && e.routeName !== null && isMode(e.data.mode))
      tables.set(e.routeName, { mode: e.data.mode, weights: weightsOf(e, idByName) });
  }
  return { lines: state, tables };
}

export class RecordedTimeline {
  private readonly builder: TimelineBuilder;
  private readonly idByName: Map<string, string>;

  constructor(
    range: { from: number; to: number },
    lines: readonly ReplayLine[],
    routes: readonly ReplayRoute[],
    start: TimelineStart,
    keepPoints: (lineId: string) => boolean = () => false,
  ) {
    this.idByName = new Map(lines.map((l) => [l.name, l.id]));
    this.builder = new TimelineBuilder(range.from, range.to, lines, routes, start, keepPoints);
  }

  /** Events in time order. */
  push(e: RecordedEvent): void {
    if (e.kind === "state_change" && e.lineId !== null && isState(e.data.to)) this.builder.lineState(e.lineId, e.at, e.data.to, e.reason);
    else if (e.kind === "weight_change" && e.lineId !== null && typeof e.data.to === "number")
      this.builder.lineFactor(e.lineId, e.at, e.data.to, e.reason);
    else if (e.kind === "table_published" && e.routeName !== null && isMode(e.data.mode))
      this.builder.table(e.routeName, e.at, e.data.mode, weightsOf(e, this.idByName), true);
  }

  finish(): TimelineSummary {
    return this.builder.finish();
  }
}
