// One route's table at one version, with its pickers built once: one over every line, and one per
// protocol, since a request goes only to the lines that speak its protocol (docs/router.md).
import type { RouteTable, TableLine, TableMode } from "./types";
import { createWeightedPicker, type WeightedPicker } from "./weighted-picker";

export interface TableSnapshot {
  readonly route: string;
  readonly version: number;
  readonly mode: TableMode;
  readonly table: RouteTable;
  /** Every line with weight. */
  readonly picker: WeightedPicker<TableLine>;
  /** The protocols of the lines with weight, in table order. */
  readonly protocols: readonly string[];
  /**
   * The lines of one protocol, by their weights (each protocol's weights are a table of their own:
   * the control plane computes them apart); null when no line with weight speaks it.
   */
  pickerFor(protocol: string): WeightedPicker<TableLine> | null;
}

export function buildSnapshot(table: RouteTable): TableSnapshot {
  const picker = createWeightedPicker(table.lines);
  const byProtocol = new Map<string, TableLine[]>();
  for (const line of picker.items) {
    const group = byProtocol.get(line.protocol);
    if (group === undefined) byProtocol.set(line.protocol, [line]);
    else group.push(line);
  }
  // The usual route speaks one protocol: its picker is the table's.
  const pickers = new Map<string, WeightedPicker<TableLine>>(
    byProtocol.size === 1
      ? [[picker.items[0]?.protocol as string, picker]]
      : [...byProtocol].map(([p, lines]) => [p, createWeightedPicker(lines)]),
  );
  return {
    route: table.route,
    version: table.version,
    mode: table.mode,
    table,
    picker,
    protocols: [...byProtocol.keys()],
    pickerFor: (protocol) => pickers.get(protocol) ?? null,
  };
}
