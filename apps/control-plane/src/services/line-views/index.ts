// The read model of lines: what the API and the dashboard show of them (list, health, a line's page,
// the overview). Reads only; the services next to it own every change.
import { isUuid, type LineHealth } from "@linewatch/contract";
import { findLineByName } from "@linewatch/db";
import type { AppDeps } from "../../deps";
import type { Engine } from "../../engine";
import { NotFoundError } from "../../errors";
import { lineHealth } from "./line-health";
import { type LinePage, loadLinePage } from "./line-page";
import { OverviewData, type WindowHours } from "./overview";

/** How the overview bins answer lengths (bin 0: empty; then LENGTH_BINS log-spaced bins over LENGTH_DECADES decades; then longer). */
export { LENGTH_BINS, LENGTH_DECADES } from "@linewatch/db";
export type { LineChart, LinePage } from "./line-page";
export { type EventView, type LineView, type LiveCell, type Overview, type RouteView, WINDOWS, type WindowHours } from "./overview";
export { liveView, resultView } from "./probe-results";

export class LineViews {
  /** Shared by every viewer of the dashboard (see OverviewData). */
  readonly overview: OverviewData;

  constructor(
    private readonly deps: AppDeps,
    private readonly engine: Engine,
  ) {
    this.overview = new OverviewData(deps, engine);
  }

  /** GET /v1/lines/:id/health. */
  async health(id: string): Promise<LineHealth> {
    const health = isUuid(id) ? await lineHealth(this.deps, this.engine, id) : null;
    if (!health) throw new NotFoundError(`line ${id}`);
    return health;
  }

  /** A line's page on the dashboard; null when there is no such line. */
  page(id: string, hours: WindowHours): Promise<LinePage | null> {
    return loadLinePage(this.deps, this.engine, id, hours);
  }

  /** A line by id or by name (operators type names into the address bar); null when none has it. */
  async resolveId(idOrName: string): Promise<string | null> {
    const snapshot = await this.engine.registry.get();
    if (isUuid(idOrName) && snapshot.lines.has(idOrName)) return idOrName;
    for (const l of snapshot.lines.values()) if (l.name === idOrName) return l.id;
    // Registered on another replica since the cache was loaded.
    const found = isUuid(idOrName) ? null : await findLineByName(this.deps.database.db, idOrName);
    return found?.id ?? null;
  }

  /** Every line's name, sorted. */
  async names(): Promise<string[]> {
    return [...(await this.engine.registry.get()).lines.values()].map((l) => l.name).sort();
  }
}
