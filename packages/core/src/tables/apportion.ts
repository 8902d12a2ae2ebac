// Largest remainder: real shares → integer weights with an exact total, caps kept where they can be.

export interface ApportionItem {
  id: string;
  /** 0–1 */
  share: number;
  /** Most units this item may get (its maxShare); broken only when no item has room left. */
  capUnits: number;
  free: boolean;
}

interface Slot {
  readonly item: ApportionItem;
  /** What the floor cut off: exact units − floored units (ranks who gets the rest). */
  readonly remainder: number;
  units: number;
}

/**
 * Floors each share's units, then hands out the rest one unit at a time by largest remainder
 * (ties by id), first to items with room under their cap and under the free group's cap.
 * When nothing has room, the rest breaks maxShare before the free cap.
 */
export function apportion(items: readonly ApportionItem[], total: number, freeCapUnits: number | null): number[] {
  // One slot per item, in item order: its floored units and the remainder the floor left.
  const slots: Slot[] = items.map((item) => {
    const exact = item.share * total;
    const units = Math.max(0, Math.floor(exact + 1e-9));
    return { item, remainder: exact - units, units };
  });
  let left = total - slots.reduce((a, s) => a + s.units, 0);
  const order = [...slots].sort((a, b) => b.remainder - a.remainder || (a.item.id < b.item.id ? -1 : 1));
  let freeUnits = slots.reduce((a, s) => (s.item.free ? a + s.units : a), 0);
  const freeRoom = (s: Slot) => !s.item.free || freeCapUnits === null || freeUnits < freeCapUnits;
  const give = (s: Slot) => {
    s.units += 1;
    if (s.item.free) freeUnits += 1;
    left -= 1;
  };
  // First round: one unit each by remainder; then any room; then break maxShare (never the free cap unless nothing else).
  const rounds: Array<(s: Slot) => boolean> = [
    (s) => s.units < s.item.capUnits && freeRoom(s),
    (s) => s.units < s.item.capUnits && freeRoom(s),
    (s) => freeRoom(s),
    () => true,
  ];
  for (const [r, may] of rounds.entries()) {
    if (r === 0) {
      for (const s of order) if (left > 0 && may(s)) give(s);
      continue;
    }
    while (left > 0) {
      const s = order.find(may);
      if (s === undefined) break;
      give(s);
    }
  }
  if (left < 0) {
    // Only reachable if the shares summed above 1: take back from the largest.
    for (const s of [...order].reverse()) {
      const back = Math.min(s.units, -left);
      s.units -= back;
      left += back;
    }
  }
  return slots.map((s) => s.units);
}
