// Largest remainder: real shares → integer weights with an exact total, caps kept where they can be.

export interface ApportionItem {
  id: string;
  /** 0–1 */
  share: number;
  /** Most units this item may get (its maxShare); broken only when no item has room left. */
  capUnits: number;
  free: boolean;
}

/**
 * Floors each share's units, then hands out the rest one unit at a time by largest remainder
 * (ties by id), first to items with room under their cap and under the free group's cap.
 * When nothing has room, the rest breaks maxShare before the free cap.
 */
export function apportion(items: readonly ApportionItem[], total: number, freeCapUnits: number | null): number[] {
  const exact = items.map((it) => it.share * total);
  const units = exact.map((x) => Math.max(0, Math.floor(x + 1e-9)));
  let left = total - units.reduce((a, u) => a + u, 0);
  const order = items
    .map((_, i) => i)
    .sort((a, b) => exact[b]! - units[b]! - (exact[a]! - units[a]!) || (items[a]!.id < items[b]!.id ? -1 : 1));
  let freeUnits = units.reduce((a, u, i) => (items[i]!.free ? a + u : a), 0);
  const freeRoom = (i: number) => !items[i]!.free || freeCapUnits === null || freeUnits < freeCapUnits;
  const give = (i: number) => {
    units[i]! += 1;
    if (items[i]!.free) freeUnits += 1;
    left -= 1;
  };
  // First round: one unit each by remainder; then any room; then break maxShare (never the free cap unless nothing else).
  const rounds: Array<(i: number) => boolean> = [
    (i) => units[i]! < items[i]!.capUnits && freeRoom(i),
    (i) => units[i]! < items[i]!.capUnits && freeRoom(i),
    (i) => freeRoom(i),
    () => true,
  ];
  for (const [r, may] of rounds.entries()) {
    if (r === 0) {
      for (const i of order) if (left > 0 && may(i)) give(i);
      continue;
    }
    while (left > 0) {
      const i = order.find(may);
      if (i === undefined) break;
      give(i);
    }
  }
  if (left < 0) {
    // Only reachable if the shares summed above 1: take back from the largest.
    for (const i of [...order].reverse()) {
      const back = Math.min(units[i]!, -left);
      units[i]! -= back;
      left += back;
    }
  }
  return units;
}
