import { scoreTone } from "@linewatch/core";
import { type Command, requireArg } from "../command";
import type { Context } from "../context";
import { ago, fields, fixed, oneLine, paint, table, timestamp, truncate } from "../format";
import { findLine } from "../resolve";
import type { Line, LineHealth, LineList, ProbeResult } from "../types";

/** Requests at a time when reading the health of every line. */
const CONCURRENCY = 8;

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  // One iterator shared by the workers: each takes the next item when it is free.
  const queue = items.entries();
  const worker = async () => {
    for (const [i, item] of queue) out[i] = await fn(item);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

const components = (c: ProbeResult["components"] | null) =>
  c
    ? `len ${fixed(c.length, 2)} fld ${fixed(c.fields, 2)} fresh ${fixed(c.freshness, 2)} st ${fixed(c.status, 2)} lat ${fixed(c.latency, 2)}`
    : "-";

const stateDetail = (h: LineHealth, now: number) => {
  if (h.cooldown) return `until ${ago(h.cooldown.until, now).replace(/^in /, "in ")}`;
  if (h.probation) return `stage ${h.probation.stage} (${Math.round(h.probation.factor * 100)}%)`;
  if (h.state !== "healthy" && h.state !== "degraded") return "";
  return h.holdUntil && Date.parse(h.holdUntil) > now ? `held ${ago(h.holdUntil, now)}` : "";
};

/** The checks a probe failed (and the ones its sample could not have checked), named. */
export const checkSummary = (r: Pick<ProbeResult, "checks">): string =>
  r.checks
    .filter((c) => c.verdict !== "pass")
    .map((c) => (c.verdict === "broken" ? `${c.name} (broken sample)` : c.name))
    .join(", ");

export function probeTable(results: ProbeResult[], now = Date.now()): string {
  return table(
    ["WHEN", "SAMPLE", "SCORE", "PASS", "LATENCY", "STATUS", "LENGTH", "FAILED CHECKS", "WHY"],
    results.map((r) => [
      ago(r.startedAt, now),
      r.sample,
      fixed(r.score, 0),
      r.passed ? "yes" : r.hardFailure ? "HARD" : "no",
      `${r.latencyMs}ms`,
      r.errorClass ?? r.status,
      r.contentLength,
      checkSummary(r) || "-",
      truncate(oneLine(r.reasons.join("; ")), 80),
    ]),
  );
}

/** Live traffic next to the probes (docs/live-evidence.md): what the routers saw over the recent window. */
export function liveSummary(live: LineHealth["live"]): string {
  const r = live.recent;
  // Held back by a router's ejection (docs/router.md#ejection): requests the line was due but did not get.
  const held = r.heldBack > 0 ? `, ${r.heldBack} held back by ejection` : "";
  if (r.requests === 0) return `no live answers reported in the recent window${held}`;
  const counts = Object.entries(r.counts)
    .filter(([, n]) => n > 0)
    .map(([o, n]) => `${n} ${o}`)
    .join(", ");
  const success = r.successRate === null ? "-" : `${fixed(r.successRate * 100, 1)}%`;
  return `${r.requests} answers (${counts}), ${success} ok, failures ${fixed(r.failureRate * 100, 1)}% (baseline ${fixed(live.baseline.failureRate * 100, 1)}% of ${live.baseline.requests}), ${r.routers.length} router${r.routers.length === 1 ? "" : "s"}${held}${live.suspect ? " — SUSPECT" : ""}`;
}

const share = (x: number) => `${Math.round(x * 100)}%`;

/** "7 97%, 5 3% (40 answers)" of an anchor; "none yet" before it has any. */
const anchorText = (v: LineHealth["relay"]["fingerprints"][number]["variants"][number]) =>
  v.answers === 0 ? "none yet" : `${v.anchor.map((a) => `${a.answer} ${share(a.share)}`).join(", ")} (${v.answers} answers)`;

/**
 * What a relay can fake (docs/scoring.md#what-a-relay-can-fake): the fingerprint verdict of each
 * fingerprint sample, the usage verdicts, the answers' shape and the billing evidence.
 */
export function relaySummary(relay: LineHealth["relay"]): { fields: [string, string | null][]; table: string | null } {
  const moved = relay.fingerprints.filter((f) => f.failing.length > 0);
  const failingUsage = relay.usage.filter((u) => u.failing !== null);
  const b = relay.billing;
  const fields: [string, string | null][] = [
    [
      "fingerprint",
      relay.fingerprints.length === 0
        ? "no fingerprint sample"
        : moved.length === 0
          ? `as anchored (${relay.fingerprints.length} samples)`
          : `MOVED: ${moved.map((f) => `${f.sample} (${f.failing.join(", ")})`).join(", ")}`,
    ],
    [
      "usage",
      relay.usage.length === 0
        ? "no usage reported"
        : failingUsage.length === 0
          ? `as expected (${relay.usage.length} samples)`
          : `FAILING: ${failingUsage.map((u) => `${u.sample}: ${u.failing}`).join("; ")}`,
    ],
    [
      "billing (24 h)",
      b.probes === 0
        ? "no usage reported"
        : `claimed ${b.claimedInput} in / ${b.claimedOutput} out, expected ${b.expectedInput} in / ${b.expectedOutput} out` +
          `${b.inflation === null ? "" : ` (${fixed(b.inflation * 100, 1)}%)`}, ${b.usageFailures} usage failure(s) in ${b.probes} probes`,
    ],
    [
      "shape",
      relay.shape === null
        ? null
        : `${relay.shape.usual ?? "learning"} (${relay.shape.answers} answers)${relay.shape.changedAt ? `; changed ${timestamp(relay.shape.changedAt)}${relay.shape.recentlyChanged ? " (RECENT)" : ""}` : ""}`,
    ],
  ];
  const rows = relay.fingerprints.flatMap((f) =>
    f.variants.map((v, i) => [
      i === 0 ? f.sample : "",
      i === 0 ? (f.failing.length > 0 ? `MOVED (${f.failing.join(", ")})` : "ok") : "",
      i === 0 ? `own ${fixed(f.own, 1)}, peers ${fixed(f.peers, 1)} of ${fixed(f.threshold, 1)}` : "",
      v.variant,
      anchorText(v),
      v.latest.map((a) => `${a.answer} ×${a.count}`).join(", ") || "-",
    ]),
  );
  return {
    fields,
    table: rows.length === 0 ? null : table(["FINGERPRINT", "VERDICT", "EVIDENCE", "PHRASING", "ANCHORED ANSWERS", "LATEST"], rows),
  };
}

/** A line's state and score in its tone: a line at weight 0 never shows a good score in green. */
const stateText = (h: LineHealth, color: boolean) => paint(h.state, h.tone, color);
const scoreText = (h: LineHealth, color: boolean) => paint(fixed(h.score), scoreTone(h.score, h.tone), color);

function showHealth(h: LineHealth, now: number, color: boolean): string {
  const relay = relaySummary(h.relay);
  const head = fields([
    ["line", h.name],
    ["state", `${stateText(h, color)}${h.state !== h.serviceState ? ` (probes say ${h.serviceState})` : ""} since ${ago(h.since, now)}`],
    ["score", scoreText(h, color)],
    ["components", components(h.components)],
    ["weightFactor", fixed(h.weightFactor, 2)],
    ["cooldown", h.cooldown ? `until ${timestamp(h.cooldown.until)} (${Math.round(h.cooldown.durationMs / 1000)} s)` : null],
    ["probation", h.probation ? `stage ${h.probation.stage}, ${Math.round(h.probation.factor * 100)}% of its weight` : null],
    ["holdUntil", h.holdUntil ? timestamp(h.holdUntil) : null],
    ["fastProbeUntil", h.fastProbeUntil ? `${timestamp(h.fastProbeUntil)} (after a trend alert)` : null],
    ["streaks", `${h.consecutiveFailures} failed, ${h.consecutivePasses} passed in a row`],
    [
      "evidence",
      `hard ${fixed(h.evidence.hard, 1)} of ${fixed(h.evidence.hardThreshold, 1)} (usual rate ${fixed(h.evidence.hardRate * 100, 1)}%), ` +
        `content ${fixed(Math.max(h.evidence.content, h.evidence.worstSample?.value ?? 0), 1)} of ${fixed(h.evidence.contentThreshold, 1)}`,
    ],
    [
      "routes",
      h.routes.map((r) => `${r.route}: weight ${r.weight} of 10000 (base ${r.baseWeight}, table v${r.tableVersion ?? "-"})`).join("; "),
    ],
    [
      "probing",
      `${h.probing.samples.length} samples every ${h.probing.intervalSec} s, ~${h.probing.probesPerDay}/day, ~${h.probing.tokensPerDay} tokens/day`,
    ],
    ["live", liveSummary(h.live)],
    ["live verdict", h.live.suspect ? h.live.reason : null],
    ...relay.fields,
  ]);
  const fingerprints = relay.table ? `\n\nfingerprints (what a relay can fake):\n${relay.table}` : "";
  const recent = h.recent.length ? `\n\nrecent probes:\n${probeTable(h.recent, now)}` : "\n\nno probes yet: run `linewatch probe LINE`";
  const failed = h.recent.find((r) => !r.passed);
  const excerpt = failed
    ? `\n\nlatest failed probe (${failed.sample}, ${ago(failed.startedAt, now)}): ${checkSummary(failed) ? `failed ${checkSummary(failed)}: ` : ""}${failed.reasons.join("; ") || failed.errorClass}\n  excerpt: ${truncate(oneLine(failed.excerpt), 300)}`
    : "";
  return `${head}${fingerprints}${recent}${excerpt}`;
}

async function allHealth(ctx: Context, now: number) {
  const { lines } = await ctx.api.get<LineList>("/v1/lines");
  const health = await mapLimited(lines, CONCURRENCY, (l: Line) => ctx.api.get<LineHealth>(`/v1/lines/${l.id}/health`));
  ctx.output({ lines: health.map(({ recent: _recent, ...h }) => h) }, () =>
    health.length === 0
      ? "no lines yet"
      : table(
          ["LINE", "STATE", "SCORE", "FACTOR", "WEIGHTS", "SINCE", "DETAIL", "LAST PROBE", "LIVE OK"],
          health.map((h) => [
            h.name,
            stateText(h, ctx.color),
            scoreText(h, ctx.color),
            fixed(h.weightFactor, 2),
            h.routes.map((r) => `${r.route}:${r.weight}`).join(","),
            ago(h.since, now),
            stateDetail(h, now),
            h.recent[0] ? `${ago(h.recent[0].startedAt, now)} ${h.recent[0].passed ? "pass" : "FAIL"}` : "never",
            h.live.recent.successRate === null
              ? "-"
              : `${fixed(h.live.recent.successRate * 100, 1)}% of ${h.live.recent.requests}${h.live.suspect ? " SUSPECT" : ""}`,
          ]),
        ),
  );
}

export const healthCommands: Command[] = [
  {
    name: "health",
    args: "[LINE]",
    max: 1,
    summary: "state, score and weights of every line, or one line in detail with its recent probes",
    async run(ctx, [ref]) {
      const now = Date.now();
      if (ref === undefined) return allHealth(ctx, now);
      const line = await findLine(ctx.api, ref);
      const h = await ctx.api.get<LineHealth>(`/v1/lines/${line.id}/health`);
      ctx.output(h, () => showHealth(h, now, ctx.color));
    },
  },
  {
    name: "probe",
    args: "LINE",
    min: 1,
    max: 1,
    summary: "probe a line now with every sample that applies, and show the results",
    async run(ctx, [ref]) {
      const line = await findLine(ctx.api, requireArg(ref));
      // A probe waits for the upstream: as long as its slowest sample's timeout.
      const run = await ctx.api.post<{ results: ProbeResult[] }>(`/v1/lines/${line.id}/probe`, undefined, { timeoutMs: 15 * 60_000 });
      ctx.output(run, () => (run.results.length === 0 ? `no sample applies to line ${line.name}` : probeTable(run.results)));
    },
  },
];
