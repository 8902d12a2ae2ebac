import type { Command } from "../command";
import { table, timestamp } from "../format";
import type { Table, TableList } from "../types";

const share = (weight: number) => `${(weight / 100).toFixed(1)}%`;

export function showTable(t: Table): string {
  const head = `route ${t.route}  version ${t.version}  mode ${t.mode}  published ${timestamp(t.generatedAt)}`;
  if (t.lines.length === 0) return `${head}\n(no lines: requests for this route fail)`;
  // A route whose lines speak several protocols is a table per protocol: each protocol's shares sum to 100%.
  return `${head}\n${table(
    ["LINE", "TIER", "STATE", "WEIGHT", "SHARE", "PROTOCOL", "MODEL"],
    t.lines.map((l) => [l.name, l.tier, l.state, l.weight, share(l.weight), l.protocol, l.model]),
  )}`;
}

export const tableCommands: Command[] = [
  {
    name: "table",
    args: "[ROUTE]",
    max: 1,
    summary: "a route's published weight table (every route's without ROUTE)",
    async run(ctx, [route]) {
      if (route === undefined) {
        const list = await ctx.api.get<TableList>("/v1/tables");
        ctx.output(list, () => (list.tables.length === 0 ? "no tables yet: create a route" : list.tables.map(showTable).join("\n\n")));
        return;
      }
      const t = await ctx.api.get<Table>(`/v1/tables/${encodeURIComponent(route)}`);
      ctx.output(t, () => showTable(t));
    },
  },
];
