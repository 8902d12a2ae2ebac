// The shell of a policy replay (docs/replay.md): resolve the request against the registry, stream the
// range's probe results and events from the database into core's replay, build the report. Reads
// only; a client that goes away aborts it between pages.
import type { ReplayRequest } from "@linewatch/contract";
import {
  applicableSamples,
  buildReport,
  DEFAULT_HEALTH_POLICY,
  type HealthPolicy,
  linePolicy,
  PolicyReplay,
  parseReplayPolicy,
  partitionReplay,
  probeIntervalMs,
  proposedLinePolicy,
  RecordedTimeline,
  type ReplayLine,
  type ReplayPolicy,
  type ReplayReport,
  type ReplayRoute,
  type ReplayRun,
  recordedStart,
  unprobedFactor,
} from "@linewatch/core";
import { countReplayResults, firstReplayResultAt, replayEventPages, replayEventsBefore, replayResultPages } from "@linewatch/db";
import type { AppDeps } from "../deps";
import { ValidationError } from "../errors";
import type { CachedLine, RegistrySnapshot } from "../registry-cache";
import { copyChunks, copyResultBatches, copyStatement, postgresClient } from "./copy-results";
import { startReplayParts } from "./replay-parts";

/** The body of `POST /v1/replay` (docs/replay.md): a range, lines or routes, a proposed policy, a line to follow. */
export type { ReplayRequest };

export interface ReplayProgress {
  done: number;
  total: number;
}

const DAY = 86_400_000;
/** Results between two progress reports (a keyset page's worth). */
const PROGRESS_EVERY = 20_000;
/** Results from which a replay is worth worker threads (starting one costs tens of ms). */
export const PARTS_FROM = 200_000;
const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: DAY };

/** "24h" → ms; null when it is not a duration. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(text.trim());
  const unit = m?.[2] ? UNITS[m[2]] : undefined;
  return m?.[1] && unit ? Number(m[1]) * unit : null;
}

export const NOTES = [
  "Expectations are not re-checked: a probe's content is not stored. A proposed weights/passScore re-scores each stored result from its stored components and keeps its stored check verdicts; hard failures stay failures.",
  "The range starts at its first stored probe result. Each line starts the replay healthy at full weight there; the actual side starts where the recorded events left it.",
  "Admin states (drained/disabled) are today's, for the whole range.",
  "Confirming re-probes are in the history as the live policy asked for them; a proposed reprobeDelayMs cannot add or move any.",
  "Relay verdicts (fingerprint, usage) are the stored ones, not re-run: their references (the line's and its paid peers' anchors as they stood) are not in the range. A probe that failed one is a content failure as it was live; a fingerprint answer's stored step moves the line's fingerprint track as live (it teaches no length anchor).",
  "A bad episode: at least 2 failed probes of a line with fewer than 3 passes between them (stored verdicts); shareMinutes: the line's table share (mean over its routes) integrated over the episode, in minutes.",
];

interface Resolved {
  from: number;
  to: number;
  replayLines: ReplayLine[];
  replayRoutes: ReplayRoute[];
  reportLines: ReplayLine[];
  reportRoutes: ReplayRoute[];
  policies: Map<string, HealthPolicy>;
  proposed: ReplayPolicy;
  timelineLine: string | null;
  /** null: every line is replayed, read results without a line filter. */
  lineFilter: string[] | null;
}

/** A line as the replay runs it, with the probe interval the live path gives its health machine. */
function toReplayLine(l: CachedLine, snapshot: RegistrySnapshot): ReplayLine {
  const samples = applicableSamples(l, snapshot.samples.values());
  const interval = probeIntervalMs(l, samples.length);
  return {
    id: l.id,
    name: l.name,
    tier: l.tier,
    adminState: l.adminState,
    maxShare: l.maxShare,
    routes: l.routes,
    protocol: l.protocol,
    ...(Number.isFinite(interval) ? { intervalMs: interval } : {}),
    createdAt: Date.parse(l.createdAt),
    sampleIds: samples.map((s) => s.id),
  };
}

/** Checks the request against the registry and the clock; every problem is a 400 naming its field. */
export function resolveReplay(req: ReplayRequest, snapshot: RegistrySnapshot, now: number, retentionDays: number): Resolved {
  let from: number;
  let to: number;
  if (req.since !== undefined) {
    if (req.from !== undefined) throw ValidationError.field("since", "give since or from, not both");
    const ms = parseDuration(req.since);
    if (ms === null || ms <= 0) throw ValidationError.field("since", 'a duration such as "24h", "90m" or "2d"');
    to = req.to === undefined ? now : Date.parse(req.to);
    from = to - ms;
  } else {
    to = req.to === undefined ? now : Date.parse(req.to);
    from = req.from === undefined ? to - DAY : Date.parse(req.from);
  }
  if (Number.isNaN(to)) throw ValidationError.field("to", "an ISO time");
  if (Number.isNaN(from)) throw ValidationError.field("from", "an ISO time");
  if (from >= to) throw ValidationError.field("from", "before to");
  const retentionMs = retentionDays * DAY;
  if (to - from > retentionMs)
    throw ValidationError.field(req.since !== undefined ? "since" : "from", `a range of at most the retention (${retentionDays} days)`);
  if (from < now - retentionMs)
    throw ValidationError.field(req.since !== undefined ? "since" : "from", `within the retention (${retentionDays} days back from now)`);

  const all = [...snapshot.lines.values()];
  const byNameOrId = (key: string) => snapshot.lines.get(key) ?? all.find((l) => l.name === key);
  const pickedLines = (req.lines ?? []).map((key, i) => {
    const line = byNameOrId(key);
    if (!line) throw ValidationError.field(`lines.${i}`, `no line named ${JSON.stringify(key)}`);
    return line;
  });
  (req.routes ?? []).forEach((name, i) => {
    if (!snapshot.routes.has(name)) throw ValidationError.field(`routes.${i}`, `no route named ${JSON.stringify(name)}`);
  });
  const picked = req.lines !== undefined || req.routes !== undefined;
  const reportRouteNames = new Set(
    picked ? [...(req.routes ?? []), ...pickedLines.flatMap((l) => l.routes.map((m) => m.route))] : [...snapshot.routes.keys()],
  );
  const inRoutes = (l: CachedLine) => l.routes.some((m) => reportRouteNames.has(m.route));
  // A route's table needs every member, so the replay runs the whole of each route reported.
  const replayLineSet = new Set(picked ? [...pickedLines, ...all.filter(inRoutes)] : all);
  const reportLines = picked
    ? [...new Set([...pickedLines, ...all.filter((l) => l.routes.some((m) => req.routes?.includes(m.route)))])]
    : all;
  const routeOf = (name: string): ReplayRoute => {
    const r = snapshot.routes.get(name);
    if (!r) throw new Error(`route ${name} vanished from the snapshot`);
    return { name, freeShareCap: r.freeShareCap, onAllDown: r.onAllDown };
  };
  const replayRouteNames = new Set([...replayLineSet].flatMap((l) => l.routes.map((m) => m.route)).filter((n) => snapshot.routes.has(n)));

  const parsed = parseReplayPolicy(req.policy);
  if (!parsed.ok) throw new ValidationError(`${parsed.error[0]?.field}: ${parsed.error[0]?.message}`, parsed.error);
  const proposed = parsed.value;
  const policies = new Map<string, HealthPolicy>();
  const hasOverrides = Object.keys(proposed.overrides).length > 0;
  for (const line of replayLineSet) {
    if (!hasOverrides) {
      policies.set(line.id, linePolicy(line, snapshot.routes));
      continue;
    }
    const p = proposedLinePolicy(line, snapshot.routes, proposed.overrides);
    if (!p.ok)
      throw new ValidationError(`${p.error[0]?.field}: ${p.error[0]?.message} (with line ${line.name}'s route overrides)`, p.error);
    policies.set(line.id, p.value);
  }
  let timelineLine: string | null = null;
  if (req.timeline !== undefined) {
    const line = byNameOrId(req.timeline);
    if (!line) throw ValidationError.field("timeline", `no line named ${JSON.stringify(req.timeline)}`);
    timelineLine = line.id;
  }
  return {
    from,
    to,
    replayLines: [...replayLineSet].map((l) => toReplayLine(l, snapshot)),
    replayRoutes: [...replayRouteNames].sort().map(routeOf),
    reportLines: reportLines.map((l) => toReplayLine(l, snapshot)),
    reportRoutes: [...reportRouteNames]
      .filter((n) => snapshot.routes.has(n))
      .sort()
      .map(routeOf),
    policies,
    proposed,
    timelineLine,
    lineFilter: replayLineSet.size === all.length ? null : [...replayLineSet].map((l) => l.id).sort(),
  };
}

/** Reads a page ahead while `each` takes the current one; an abort stops between pages. */
async function readAhead<T>(pages: AsyncGenerator<T>, signal: AbortSignal | undefined, each: (page: T) => Promise<void>): Promise<void> {
  let next = pages.next();
  try {
    for (let page = await next; !page.done; page = await next) {
      next = pages.next();
      signal?.throwIfAborted();
      await each(page.value);
    }
  } finally {
    // The read ahead may fail after an abort: nobody waits for it, so it must not go unhandled.
    await next.catch(() => {});
    await pages.return(undefined);
  }
}

/** Runs a replay; throws a ValidationError for a range without results, an AbortError when `signal` aborts. */
export async function runReplay(
  deps: Pick<AppDeps, "database" | "clock" | "config">,
  snapshot: RegistrySnapshot,
  req: ReplayRequest,
  /** `pageSize`: read keyset pages of this size (and report progress after each) instead of a COPY stream. */
  opts: {
    signal?: AbortSignal;
    onProgress?: (p: ReplayProgress) => void;
    pageSize?: number;
    /** Worker threads (default the config's); 1: this thread only. */
    workers?: number;
    /** Results from which the replay runs in parts (default PARTS_FROM). */
    partsFrom?: number;
  } = {},
): Promise<ReplayReport> {
  const asked = resolveReplay(req, snapshot, deps.clock.now(), deps.config.retentionDays);
  const db = deps.database.db;
  const first = await firstReplayResultAt(db, { from: new Date(asked.from), to: new Date(asked.to), lineIds: asked.lineFilter });
  if (first === null) throw ValidationError.field(req.since !== undefined ? "since" : "from", "no probe results in the range");
  // The range starts at its first result: before it there is nothing to replay, and shares and
  // times per state over an empty stretch (lines not yet registered) would only dilute both sides.
  const r = { ...asked, from: Math.max(asked.from, first) };
  const range = { from: new Date(r.from), to: new Date(r.to), lineIds: r.lineFilter };
  const total = await countReplayResults(db, range);
  const keepPoints = (id: string) => id === r.timelineLine;
  const setup = {
    from: r.from,
    to: r.to,
    sampleWeights: new Map([...snapshot.samples.values()].map((s) => [s.id, s.weight ?? 1])),
    policies: r.policies,
    scoring: r.proposed.scoring,
  };
  let done = 0;
  let told = 0;
  const progress = (rows: number) => {
    done += rows;
    // A batch of a COPY is a few hundred rows: progress every page's worth is enough.
    if (done - told >= (opts.pageSize ?? PROGRESS_EVERY)) {
      told = done;
      opts.onProgress?.({ done, total });
    }
  };
  opts.onProgress?.({ done, total });
  const rescoring = r.proposed.scoring !== null;
  const signal = opts.signal ? { signal: opts.signal } : {};
  // PostgreSQL streams the range in one binary COPY (the server reads ahead into the socket);
  // PGlite has no COPY stream: keyset pages there.
  const client = opts.pageSize === undefined ? postgresClient(deps.database) : null;
  const copy = { from: r.from, to: r.to, lineIds: r.lineFilter };
  const pages = () =>
    replayResultPages(db, range, { withComponents: rescoring, ...signal, ...(opts.pageSize ? { pageSize: opts.pageSize } : {}) });
  // A line is new within the range (it starts unprobed, as it did: docs/health.md#new-lines) when it
  // was registered within the range asked for (which starts at the first result when that is later)
  // and nothing was recorded of it before: registration times come from the database's clock,
  // events from the control plane's.
  const before = await replayEventsBefore(db, range.from);
  const recordedBefore = new Set(before.flatMap((e) => (e.lineId === null ? [] : [e.lineId])));
  const replayLines = r.replayLines.map((l) => {
    const { createdAt, ...known } = l;
    if (createdAt === undefined || createdAt < asked.from || recordedBefore.has(l.id)) return known;
    return { ...known, createdAt: Math.max(createdAt, r.from) };
  });
  // A large range runs in parts, a worker thread each, when the lines fall into route-disjoint parts.
  const workers = opts.workers ?? deps.config.replayWorkers;
  const parts = workers > 1 && total >= (opts.partsFrom ?? PARTS_FROM) ? partitionReplay(replayLines, r.replayRoutes, workers) : [];
  let proposed: ReplayRun;
  if (parts.length > 1) {
    const parted = startReplayParts(parts, { ...setup, rescoring, timelineLine: r.timelineLine });
    try {
      if (client !== null) {
        for await (const chunk of copyChunks(client, copyStatement(copy, rescoring), opts.signal)) progress(await parted.copyChunk(chunk));
        parted.copyEnd();
      } else
        await readAhead(pages(), opts.signal, async (page) => {
          await parted.rows(page);
          progress(page.length);
        });
      proposed = await parted.finish();
    } finally {
      await parted.stop();
    }
  } else {
    const replay = new PolicyReplay({ ...setup, lines: replayLines, routes: r.replayRoutes, keepPoints });
    const batches = client !== null ? copyResultBatches(client, copy, { rescoring, ...signal }) : pages();
    await readAhead(batches, opts.signal, async (page) => {
      for (const row of page) replay.push(row);
      progress(page.length);
    });
    proposed = replay.finish();
  }
  if (told !== done) opts.onProgress?.({ done, total });

  const recorded = new RecordedTimeline(
    r,
    replayLines,
    r.replayRoutes,
    recordedStart(before, replayLines, {
      from: r.from,
      factorOf: (id) => unprobedFactor(r.policies.get(id) ?? DEFAULT_HEALTH_POLICY),
    }),
    keepPoints,
  );
  for await (const page of replayEventPages(db, range, opts.signal ? { signal: opts.signal } : {})) for (const e of page) recorded.push(e);

  return buildReport({
    from: r.from,
    to: r.to,
    lines: r.reportLines,
    routes: r.reportRoutes,
    proposed,
    actual: recorded.finish(),
    policy: {
      current: Object.keys(r.proposed.overrides).length === 0 && r.proposed.scoring === null,
      overrides: Object.fromEntries(Object.entries(r.proposed.overrides).sort(([a], [b]) => (a < b ? -1 : 1))),
      scoring: r.proposed.scoring,
    },
    notes: NOTES,
  });
}
