// The route both detection scripts simulate: two paid lines and the free line that goes bad.
import { computeTable, type TableRoute } from "../../packages/core/src/index";

export const route: TableRoute = { name: "chat-default", freeShareCap: 0.2, onAllDown: "fail-open" };
/** The free line that goes bad (20% of the route while healthy: the free cap). */
export const BAD = "free-a";

/** The bad line's weight in the route's table for a health factor, the two paid lines at full weight. */
export function weightOf(factor: number): number {
  const t = computeTable({
    route,
    members: [
      { lineId: "paid-a", tier: "paid", baseWeight: 100, factor: 1, maxShare: null },
      { lineId: "paid-b", tier: "paid", baseWeight: 100, factor: 1, maxShare: null },
      { lineId: BAD, tier: "free", baseWeight: 100, factor, maxShare: null },
    ],
  });
  return t.lines.find((l) => l.lineId === BAD)?.weight ?? 0;
}
