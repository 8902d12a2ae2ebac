import type { ReplayReport } from "@linewatch/core";
import type { Command } from "../command";
import type { Context } from "../context";
import { UsageError } from "../errors";
import { table, timestamp, truncate } from "../format";
import { readDataFile } from "../read-file";

const pct = (share: number) => `${(share * 100).toFixed(1)}%`;
const when = (iso: string | null) => (iso === null ? "-" : timestamp(iso));
const minutes = (m: number | undefined) => (m === undefined || m === 0 ? "0" : m.toFixed(1));
const arrow = (a: string | number, b: string | number) => (String(a) === String(b) ? String(a) : `${a} → ${b}`);
const zeroMinutes = (side: ReplayReport["lines"][number]["actual"], to: string) =>
  side.zeroWeight.reduce((acc, z) => acc + (Date.parse(z.to ?? to) - Date.parse(z.from)) / 60_000, 0);

/** The report as an operator reads it: lines, routes, episodes, then what the replay cannot know. */
export function showReport(r: ReplayReport): string {
  const out: string[] = [];
  const overrides = (r.policy.overrides ?? {}) as Record<string, unknown>;
  const policy = Object.entries(overrides).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  if (r.policy.scoring) policy.push(`scoring=${JSON.stringify(r.policy.scoring)}`);
  out.push(
    `replay ${timestamp(r.range.from)} → ${timestamp(r.range.to)}  ${r.results} probe results  policy: ${policy.length === 0 ? "current" : policy.join(" ")}`,
    "(each column: actual → proposed)",
    "",
    table(
      ["LINE", "COOLDOWNS", "AT WEIGHT 0 (MIN)", "MEAN SHARE", "HEALTHY MIN", "DEGRADED MIN", "PROBATION MIN"],
      r.lines.map((l) => [
        l.name,
        arrow(l.actual.cooldowns.length, l.proposed.cooldowns.length),
        arrow(zeroMinutes(l.actual, r.range.to).toFixed(1), zeroMinutes(l.proposed, r.range.to).toFixed(1)),
        arrow(pct(l.actual.meanShare), pct(l.proposed.meanShare)),
        arrow(minutes(l.actual.stateMinutes.healthy), minutes(l.proposed.stateMinutes.healthy)),
        arrow(minutes(l.actual.stateMinutes.degraded), minutes(l.proposed.stateMinutes.degraded)),
        arrow(minutes(l.actual.stateMinutes.probation), minutes(l.proposed.stateMinutes.probation)),
      ]),
    ),
    "",
    table(
      ["ROUTE", "VERSIONS", "PER HOUR (MEAN)", "WORST HOUR", "DEGRADED MIN", "PANIC MIN"],
      r.routes.map((rt) => [
        rt.name,
        arrow(rt.actual.versions, rt.proposed.versions),
        arrow(rt.actual.versionsPerHour.mean, rt.proposed.versionsPerHour.mean),
        arrow(rt.actual.versionsPerHour.worst?.versions ?? 0, rt.proposed.versionsPerHour.worst?.versions ?? 0),
        arrow(minutes(rt.actual.degradedMinutes), minutes(rt.proposed.degradedMinutes)),
        arrow(minutes(rt.actual.panicMinutes), minutes(rt.proposed.panicMinutes)),
      ]),
    ),
    "",
  );
  if (r.episodes.length === 0) out.push("no bad episodes in the range (2+ failed probes of a line without 3 passes between)");
  else
    out.push(
      table(
        ["LINE", "BAD FROM", "TO", "FAILED", "DOWN (ACTUAL)", "DOWN (PROPOSED)", "CHANGE", "SHARE-MIN"],
        r.episodes.map((e) => [
          e.line,
          when(e.from),
          when(e.to),
          e.failedProbes,
          when(e.actual.downAt),
          when(e.proposed.downAt),
          e.bySeconds === null || e.change === "same" ? e.change : `${e.change} (${Math.abs(e.bySeconds)} s)`,
          arrow(e.actual.shareMinutes, e.proposed.shareMinutes),
        ]),
      ),
      `bad episodes carried ${r.badEpisodeShare.actualShareMinutes} share-minutes, proposed ${r.badEpisodeShare.proposedShareMinutes} (${r.badEpisodeShare.change >= 0 ? "+" : ""}${r.badEpisodeShare.change})`,
    );
  const cooldowns = r.lines.flatMap((l) => l.proposed.cooldowns.map((c) => [l.name, when(c.at), truncate(c.reason, 90)]));
  if (cooldowns.length > 0 && cooldowns.length <= 30) out.push("", "proposed cooldowns:", table(["LINE", "AT", "REASON"], cooldowns));
  for (const t of r.timelines) {
    out.push("", `timeline of ${t.line}:`);
    for (const [label, points] of [
      ["actual", t.actual],
      ["proposed", t.proposed],
    ] as const)
      out.push(`  ${label}: ${points.map((p) => `${timestamp(p.at).slice(11)} ${p.state} ${p.factor}`).join(" · ")}`);
  }
  out.push("", ...r.notes.map((n) => `note: ${n}`));
  return out.join("\n");
}

function progress(ctx: Context): (line: Record<string, unknown>) => void {
  let shown = -1;
  return (line) => {
    const p = line.progress as { done: number; total: number } | undefined;
    if (!p) return;
    const frac = p.total === 0 ? 1 : p.done / p.total;
    if (ctx.io.stderrIsTTY) {
      const width = 30;
      const full = Math.round(frac * width);
      ctx.io.stderr(`\r[${"#".repeat(full)}${".".repeat(width - full)}] ${(frac * 100).toFixed(0)}% ${p.done}/${p.total} results`);
      if (p.done >= p.total) ctx.io.stderr("\n");
      return;
    }
    // Not a terminal: a line per tenth, so a log stays short.
    const tenth = Math.floor(frac * 10);
    if (tenth === shown) return;
    shown = tenth;
    ctx.io.stderr(`replay: ${p.done}/${p.total} results\n`);
  };
}

export const replayCommands: Command[] = [
  {
    name: "replay",
    max: 0,
    summary: "what a health policy would have done over the recorded probe results, next to what did (never writes)",
    details: [
      "--since takes a duration back from now (24h, 90m, 2d; default 24h) or an ISO time; --from/--to an ISO range.",
      "--line (comma-separated names or ids) and --route (repeatable) choose what is replayed and reported; default all.",
      "--policy FILE holds a route's policy fields (failCount, cooldownBaseMs, ...), and optionally weights:",
      "{length, fields, freshness, status, latency} and passScore to re-score the stored components.",
      "Applying a policy stays `linewatch apply`.",
    ].join("\n"),
    options: ["since", "from", "to", "line", "route", "policy", "timeline"],
    async run(ctx) {
      const v = ctx.values;
      const body: Record<string, unknown> = {};
      if (v.since !== undefined) {
        if (/^\d+(\.\d+)?\s*[smhd]$/.test(v.since.trim())) body.since = v.since.trim();
        else if (!Number.isNaN(Date.parse(v.since))) body.from = new Date(v.since).toISOString();
        else throw new UsageError(`--since: a duration (24h, 90m) or an ISO time, not ${JSON.stringify(v.since)}`);
      }
      if (v.from !== undefined) {
        if (body.from !== undefined) throw new UsageError("--since with an ISO time and --from: give one");
        if (Number.isNaN(Date.parse(v.from))) throw new UsageError(`--from: not a time: ${JSON.stringify(v.from)}`);
        body.from = new Date(v.from).toISOString();
      }
      if (v.to !== undefined) {
        if (Number.isNaN(Date.parse(v.to))) throw new UsageError(`--to: not a time: ${JSON.stringify(v.to)}`);
        body.to = new Date(v.to).toISOString();
      }
      if (v.line !== undefined)
        body.lines = v.line
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== "");
      if (v.route !== undefined) body.routes = v.route;
      if (v.timeline !== undefined) body.timeline = v.timeline;
      if (v.policy !== undefined) body.policy = readDataFile(v.policy, ctx.io.cwd);
      const answer = await ctx.api.postStream<{ report: ReplayReport }>("/v1/replay", body, progress(ctx));
      ctx.output(answer.report, () => showReport(answer.report));
    },
  },
];
