import { numberOption } from "../args";
import type { Command } from "../command";
import { UsageError } from "../errors";
import { oneLine, table, timestamp, truncate } from "../format";
import type { EventPage } from "../types";

/** Who an event is about: its line (by name, as recorded) or its route. */
const subject = (e: EventPage["events"][number]) => {
  const line = typeof e.data.line === "string" ? e.data.line : null;
  return line ?? (e.route ? `route ${e.route}` : (e.lineId ?? "-"));
};

const change = (e: EventPage["events"][number]) => {
  const { from, to, version } = e.data as { from?: unknown; to?: unknown; version?: unknown };
  if (e.kind === "table_published") return `v${String(version)}`;
  if (from !== undefined || to !== undefined) return `${String(from)} → ${String(to)}`;
  return "";
};

export const eventCommands: Command[] = [
  {
    name: "events",
    max: 0,
    summary: "the timeline, newest first: state and weight changes, table publishes, trend alerts",
    options: ["line", "route", "kind", "since", "limit"],
    async run(ctx) {
      const v = ctx.values;
      const limit = numberOption(v, "limit", { integer: true }) ?? 50;
      if (v.since !== undefined && Number.isNaN(Date.parse(v.since)))
        throw new UsageError(`--since: not a time: ${JSON.stringify(v.since)}`);
      const page = await ctx.api.get<EventPage>("/v1/events", {
        query: {
          line: v.line,
          route: v.route?.at(-1),
          kind: v.kind,
          since: v.since === undefined ? undefined : new Date(v.since).toISOString(),
          limit,
        },
      });
      ctx.output(page, () =>
        page.events.length === 0
          ? "no events"
          : table(
              ["AT", "KIND", "SUBJECT", "CHANGE", "REASON"],
              page.events.map((e) => [timestamp(e.at), e.kind, subject(e), change(e), truncate(oneLine(e.reason), 100)]),
            ),
      );
    },
  },
];
