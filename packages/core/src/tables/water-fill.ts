// Proportional shares under per-line caps: what a cap cuts goes to the others in proportion.

/**
 * Splits `total` in proportion to `weights`, no share above its cap; the excess of capped
 * shares is spread again over the rest until nothing is cut. When the caps of the lines with a
 * weight hold less than `total`, each gets its cap scaled up by one ratio (the least uneven breach).
 * Lines of weight 0 get 0.
 */
export function waterFill(weights: readonly number[], caps: readonly number[], total: number): number[] {
  const shares = weights.map(() => 0);
  const live = weights.flatMap((w, i) => (w > 0 ? [i] : []));
  if (live.length === 0 || total <= 0) return shares;
  const capOf = (i: number): number => Math.max(0, caps[i] ?? 1);
  // Every i below comes from `live`, an index of `weights`: the ?? 0 never applies.
  const weightOf = (i: number): number => weights[i] ?? 0;
  const capSum = live.reduce((a, i) => a + capOf(i), 0);
  if (capSum <= total) {
    const weightSum = live.reduce((a, i) => a + weightOf(i), 0);
    for (const i of live) shares[i] = capSum > 0 ? (capOf(i) / capSum) * total : (weightOf(i) / weightSum) * total;
    return shares;
  }
  let open = live;
  let left = total;
  // Each round caps at least one line or ends, so at most n rounds.
  while (open.length > 0 && left > 0) {
    const weightSum = open.reduce((a, i) => a + weightOf(i), 0);
    const over = open.filter((i) => (weightOf(i) / weightSum) * left >= capOf(i));
    if (over.length === 0) {
      for (const i of open) shares[i] = (weightOf(i) / weightSum) * left;
      break;
    }
    for (const i of over) {
      shares[i] = capOf(i);
      left -= capOf(i);
    }
    open = open.filter((i) => !over.includes(i));
  }
  return shares;
}
