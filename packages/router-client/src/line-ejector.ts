// Local passive ejection: a line whose last few answers all failed gets no first attempts for a
// short while (it still gets them when no other line is left). Without it, a line failing every
// request would need a retry for each request it is picked for, more than the retry budget
// allows; with it, the budget only pays for the few failures that find the line out. The control
// plane's confirmed judgment (live evidence + probes) is what moves the table; this only bridges
// the seconds until it does. `now` is an input (ms).
import type { Rng } from "./types";
import type { Weighted, WeightedPicker } from "./weighted-picker";

export interface LineEjectorOptions {
  /** Consecutive failed answers that eject a line (default 3; 0: never). */
  failures: number;
  /** ms a line stays out; after it, the next answer decides (default 5000). */
  ejectMs: number;
}

export const DEFAULT_EJECTOR: LineEjectorOptions = { failures: 3, ejectMs: 5_000 };

export class LineEjector {
  private readonly streak = new Map<string, number>();
  private readonly until = new Map<string, number>();

  constructor(private readonly options: LineEjectorOptions = DEFAULT_EJECTOR) {}

  /** One answer of the line: `ok` resets its streak, a failure adds to it. True when it ejects the line (again). */
  observe(lineId: string, failed: boolean, now: number): boolean {
    if (!failed) {
      if (this.streak.delete(lineId)) this.until.delete(lineId);
      return false;
    }
    if (this.options.failures <= 0) return false;
    const n = (this.streak.get(lineId) ?? 0) + 1;
    this.streak.set(lineId, n);
    if (n < this.options.failures) return false;
    this.until.set(lineId, now + this.options.ejectMs);
    return true;
  }

  /** Lines out right now (empty in the common case: no allocation then). */
  ejected(now: number): string[] {
    if (this.until.size === 0) return NONE;
    const out: string[] = [];
    for (const [id, t] of this.until) {
      if (t > now) out.push(id);
      else this.until.delete(id); // half-open: the next answer decides, a failure ejects it again
    }
    return out;
  }
}

const NONE: string[] = [];

/** The first attempt's line, and the line ejection held the request back from (null: none). */
export interface FirstPick<T> {
  line: T;
  heldBackFrom: T | null;
}

/**
 * The first attempt's line: the table's pick, or — when `ejected` holds that line and another is
 * left — a pick among the lines not ejected. Picking by the table and then again without the ejected
 * lines gives each line left w / (the weight left), as picking among them at once would, and names
 * the line the request was held back from, so what the router's own protection kept from a line
 * still reaches the control plane (docs/router.md#ejection). Null when the picker has no line.
 */
export function pickPastEjected<T extends Weighted>(
  picker: WeightedPicker<T>,
  ejected: ReadonlyArray<string>,
  rng: Rng,
  affinityKey: string | undefined,
): FirstPick<T> | null {
  const byTable = picker.pick(rng, affinityKey === undefined ? undefined : { affinityKey });
  if (byTable === null) return null;
  if (ejected.length === 0 || !ejected.includes(byTable.id)) return { line: byTable, heldBackFrom: null };
  const other = picker.pick(rng, { affinityKey, exclude: ejected });
  // No other line left: the ejected one still serves.
  return other === null ? { line: byTable, heldBackFrom: null } : { line: other, heldBackFrom: byTable };
}
