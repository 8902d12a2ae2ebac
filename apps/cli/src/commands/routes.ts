import { numberOption } from "../args";
import { type Command, requireArg, withFlagHints } from "../command";
import { table } from "../format";
import type { Route, RouteCreate, RouteList } from "../types";

export const routeCommands: Command[] = [
  {
    name: "routes add",
    args: "NAME",
    min: 1,
    max: 1,
    summary: "create a route",
    options: ["free-share-cap", "on-all-down"],
    async run(ctx, [name]) {
      const body: RouteCreate = { name: requireArg(name) };
      const cap = numberOption(ctx.values, "free-share-cap");
      if (cap !== undefined) body.freeShareCap = cap;
      if (ctx.values["on-all-down"] !== undefined) body.onAllDown = ctx.values["on-all-down"] as RouteCreate["onAllDown"];
      const route = await withFlagHints(ctx.api.post<Route>("/v1/routes", body), {
        name: "NAME",
        freeShareCap: "--free-share-cap",
        onAllDown: "--on-all-down",
      });
      ctx.output(
        route,
        () => `created route ${route.name}${route.warnings.length ? `\nwarning: ${route.warnings.join("\nwarning: ")}` : ""}`,
      );
    },
  },
  {
    name: "routes list",
    max: 0,
    summary: "list routes with their lines and warnings",
    async run(ctx) {
      const list = await ctx.api.get<RouteList>("/v1/routes");
      ctx.output(list, () =>
        list.routes.length === 0
          ? "no routes yet: add one with `linewatch routes add NAME`"
          : table(
              ["NAME", "FREE-CAP", "ON-ALL-DOWN", "LINES", "WARNINGS"],
              list.routes.map((r) => [
                r.name,
                r.freeShareCap,
                r.onAllDown,
                r.lines.map((l) => `${l.name}:${l.weight}`).join(","),
                r.warnings.join("; "),
              ]),
            ),
      );
    },
  },
  {
    name: "routes rm",
    args: "NAME",
    min: 1,
    max: 1,
    summary: "delete a route (refused while lines or samples use it, unless --cascade)",
    options: ["cascade"],
    async run(ctx, [name]) {
      await ctx.api.delete(`/v1/routes/${encodeURIComponent(requireArg(name))}`, {
        query: { cascade: ctx.values.cascade ? "true" : undefined },
      });
      ctx.output({ deleted: { kind: "route", name } }, () => `deleted route ${name}`);
    },
  },
];
