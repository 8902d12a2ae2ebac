// Prometheus metrics of the control plane, on a registry the caller owns (never the global default).
//
// Two kinds of series:
// - what this replica's probes did (durations, outcomes, content length, field completeness, tokens):
//   counted as results come in, so `sum()` across replicas gives the fleet's figures;
// - what the database holds (line states, scores, table weights and versions, trend alerts): read at
//   scrape time, so every replica reports the same truth whichever of them ran the probe or publish.
// Labels are names of lines, samples and routes and small fixed sets (state, outcome, mode): never
// probe ids or content hashes.
import {
  ADMIN_STATES,
  type AdminState,
  DEFAULT_HEALTH_POLICY,
  HEALTH_STATES,
  isFastProbing,
  lineStatus,
  type PublishedLine,
  type PublishedTable,
} from "@linewatch/core";
import {
  countEventsByLine,
  type Database,
  errorSummary,
  type LineHealthRow,
  listLineHealth,
  listLines,
  listPublishedTables,
  listRouteRows,
  listSamples,
  type StoredProbeResult,
} from "@linewatch/db";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Logger } from "./logger";

export const PROBE_DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];
/** Characters of the answer (as the scorer counts them); 0 = an empty answer. */
export const CONTENT_LENGTH_BUCKETS = [0, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 65536];
/** Share of a sample's content checks (required fields, contains, matches) an answer met. */
export const FIELD_COMPLETENESS_BUCKETS = [0, 0.25, 0.5, 0.75, 0.99, 1];
/** Seconds: on time is under the 1 s tick; tens of seconds is a backlog. */
export const PROBE_LATENESS_BUCKETS = [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
const TABLE_MODES = ["normal", "degraded", "panic"] as const;

/** How a probe ended: passed, failed on content, or the class of its hard failure. */
export type ProbeOutcome = "pass" | "fail" | "timeout" | "connect" | "http_status" | "parse" | "protocol";

export function probeOutcome(r: Pick<StoredProbeResult, "passed" | "errorClass">): ProbeOutcome {
  if (r.errorClass) return r.errorClass;
  return r.passed ? "pass" : "fail";
}

/** The registry and health as the database holds them, read once per scrape. */
export interface ScrapeState {
  lines: { id: string; name: string; tier: string; protocol: string; adminState: string; routes: { route: string }[] }[];
  samples: { id: string; name: string }[];
  routes: string[];
  health: Pick<LineHealthRow, "lineId" | "state" | "score" | "health">[];
  /** The published tables this version can read (another shape waits for its next publish). */
  tables: PublishedTable<PublishedLine>[];
  trendAlerts: { lineId: string; count: number }[];
}

export async function readScrapeState(database: Pick<Database, "db">): Promise<ScrapeState> {
  const db = database.db;
  const [lines, samples, routes, health, tables, trendAlerts] = await Promise.all([
    listLines(db),
    listSamples(db),
    listRouteRows(db),
    listLineHealth(db),
    listPublishedTables(db),
    countEventsByLine(db, "trend_alert"),
  ]);
  return {
    lines: lines.map(({ id, name, tier, protocol, adminState, routes }) => ({ id, name, tier, protocol, adminState, routes })),
    samples: samples.map(({ id, name }) => ({ id, name })),
    routes: routes.map((r) => r.name),
    health,
    tables: tables.flatMap((t) => (t.table ? [t.table] : [])),
    trendAlerts,
  };
}

export interface MetricsSources {
  /** What the database holds now (see readScrapeState). */
  state(): Promise<ScrapeState>;
  /** Probes this replica has under way. */
  inFlight(): number;
  /** Results this replica's health machine could not apply, and the fail-safe cooldowns they caused. */
  healthFaults?(): { unappliedResults: number; failSafeCooldowns: number };
  now(): number;
  logger?: Pick<Logger, "warn">;
}

export interface MetricsOptions {
  /** Process and Node.js metrics (CPU, memory, event loop, GC) in the same registry. Default true. */
  processMetrics?: boolean;
}

/** Names of lines and samples, to label a probe result with. */
export interface ProbeNames {
  lines: ReadonlyMap<string, { name: string }>;
  samples: ReadonlyMap<string, { name: string }>;
}

const NO_SOURCES: MetricsSources = {
  state: async () => ({ lines: [], samples: [], routes: [], health: [], tables: [], trendAlerts: [] }),
  inFlight: () => 0,
  now: () => Date.now(),
};

/** Prometheus metrics on their own registry (never the global default), so tests get their own. */
export function createMetrics(registry: Registry = new Registry(), sources: MetricsSources = NO_SOURCES, options: MetricsOptions = {}) {
  if (options.processMetrics ?? true) {
    collectDefaultMetrics({ register: registry, prefix: "linewatch_" });
    // prom-client names these gauges *_total, which Prometheus reserves for counters (promtool
    // rejects them); the same counts by type stay, as linewatch_nodejs_active_{handles,requests,resources}.
    for (const name of ["active_handles_total", "active_requests_total", "active_resources_total"])
      registry.removeSingleMetric(`linewatch_nodejs_${name}`);
  }

  // One read of the database per scrape, shared by every collect() of that scrape: prom-client
  // starts them all synchronously, so they find the same promise.
  let pending: Promise<ScrapeState | null> | null = null;
  const scrape = (): Promise<ScrapeState | null> =>
    (pending ??= sources
      .state()
      .catch((error: unknown) => {
        sources.logger?.warn("metrics: cannot read the database state", errorSummary(error));
        return null;
      })
      .finally(() => {
        pending = null;
      }));

  // --- this replica's probes ---
  // Labelled by line (and sample): a series of a line or sample that is gone is dropped at scrape.
  const byLine = <L extends string>(name: string, help: string, labelNames: readonly L[]) => ({
    name,
    help,
    labelNames,
    registers: [registry],
    collect: () => pruneGone(),
  });
  const duration = new Histogram({
    ...byLine(
      "linewatch_probe_duration_seconds",
      "Time from sending a probe until its answer was read (or it timed out), by line and sample.",
      ["line", "sample"] as const,
    ),
    buckets: PROBE_DURATION_BUCKETS,
  });
  const outcomes = new Counter(
    byLine(
      "linewatch_probes_total",
      "Probes this replica ran, by line, sample and outcome (pass, fail = bad content, or the hard failure: timeout, connect, http_status, parse, protocol).",
      ["line", "sample", "outcome"] as const,
    ),
  );
  const contentLength = new Histogram({
    ...byLine(
      "linewatch_probe_content_length_characters",
      "Length of the answers to probes in characters (as the scorer counts them), by line.",
      ["line"] as const,
    ),
    buckets: CONTENT_LENGTH_BUCKETS,
  });
  const fields = new Histogram({
    ...byLine(
      "linewatch_probe_field_completeness_ratio",
      "Share of a sample's content checks (required fields, contains, matches) each answer met, 0-1, by line; hard failures count as 0.",
      ["line"] as const,
    ),
    buckets: FIELD_COMPLETENESS_BUCKETS,
  });
  const tokens = new Counter(
    byLine("linewatch_probe_tokens_total", "Tokens this replica's probes spent (usage.total_tokens of the answers), by line.", [
      "line",
    ] as const),
  );
  const lateness = new Histogram({
    name: "linewatch_probe_lateness_seconds",
    help: "How late this replica started each scheduled or confirming probe after its due time. A growing tail means more is due than LINEWATCH_MAX_IN_FLIGHT slots can send: raise it, or add a replica.",
    buckets: PROBE_LATENESS_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: "linewatch_probes_in_flight",
    help: "Probes this replica has under way.",
    registers: [registry],
    collect() {
      this.set(sources.inFlight());
    },
  });

  const faultCounter = (name: string, help: string, read: (f: { unappliedResults: number; failSafeCooldowns: number }) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const faults = sources.healthFaults?.();
        this.reset();
        if (faults) this.inc(read(faults));
      },
    });
  faultCounter(
    "linewatch_health_unapplied_results_total",
    "Probe results and live judgments this replica's health machine could not apply (a fault in the health code or a line's record; /readyz names the last).",
    (f) => f.unappliedResults,
  );
  faultCounter(
    "linewatch_health_fail_safe_total",
    "Lines this replica sent to cooldown because a failing result of theirs could not be applied (SPEC §5 fail-safe).",
    (f) => f.failSafeCooldowns,
  );

  /** Label sets this replica has emitted, per line name: dropped once the line or sample is gone or renamed. */
  const seen = new Map<string, Set<string>>();

  let pruning: Promise<void> | null = null;
  const pruneGone = (): Promise<void> =>
    (pruning ??= scrape()
      .then((state) => {
        if (!state) return;
        const lineNames = new Set(state.lines.map((l) => l.name));
        const sampleNames = new Set(state.samples.map((s) => s.name));
        for (const [line, samples] of seen) {
          if (!lineNames.has(line)) {
            for (const sample of samples) removeSeries(line, sample);
            contentLength.remove({ line });
            fields.remove({ line });
            tokens.remove({ line });
            seen.delete(line);
            continue;
          }
          for (const sample of samples) {
            if (!sampleNames.has(sample)) {
              removeSeries(line, sample);
              samples.delete(sample);
            }
          }
        }
      })
      .finally(() => {
        pruning = null;
      }));

  const removeSeries = (line: string, sample: string) => {
    duration.remove({ line, sample });
    for (const outcome of ["pass", "fail", "timeout", "connect", "http_status", "parse", "protocol"] satisfies ProbeOutcome[]) {
      outcomes.remove({ line, sample, outcome });
    }
  };

  // --- what the database holds, read at scrape time ---
  const lineNameById = (state: ScrapeState) => new Map(state.lines.map((l) => [l.id, l.name]));
  const healthById = (state: ScrapeState) => new Map(state.health.map((h) => [h.lineId, h]));
  /**
   * A line's status as its tables see it, from core's one function (the admin state over health). Its
   * state and factor do not depend on the policy; the defaults stand in for the route's overrides.
   */
  const statusOf = (line: ScrapeState["lines"][number], h: ScrapeState["health"][number] | undefined) =>
    lineStatus(isAdminState(line.adminState) ? line.adminState : "active", h?.health ?? null, DEFAULT_HEALTH_POLICY, sources.now());
  const liveTables = (state: ScrapeState) => {
    const routes = new Set(state.routes);
    return state.tables.filter((t) => routes.has(t.route));
  };

  /** A series set from the scrape's state; it has no samples when the state could not be read. */
  interface FromState {
    name: string;
    help: string;
    labelNames: readonly string[];
    /** Counters only go up: a count the database holds (events) is still one. */
    type?: "counter";
    fill(state: ScrapeState, set: (labels: Record<string, string>, value: number) => void): void;
  }

  const FROM_STATE: FromState[] = [
    {
      name: "linewatch_line_info",
      help: "1 for every registered line, with its tier and protocol (join on line).",
      labelNames: ["line", "tier", "protocol"],
      fill: (state, set) => {
        for (const l of state.lines) set({ line: l.name, tier: l.tier, protocol: l.protocol }, 1);
      },
    },
    {
      name: "linewatch_line_state",
      help: `1 for the state each line is in, 0 for the others (${HEALTH_STATES.join(", ")}).`,
      labelNames: ["line", "state"],
      fill: (state, set) => {
        const health = healthById(state);
        for (const l of state.lines) {
          const current = statusOf(l, health.get(l.id)).state;
          for (const s of HEALTH_STATES) set({ line: l.name, state: s }, s === current ? 1 : 0);
        }
      },
    },
    {
      name: "linewatch_line_score",
      help: "Line score 0-100: the mean of the line's last 10 minutes of probe scores, as of its latest probe (absent before the first).",
      labelNames: ["line"],
      fill: (state, set) => {
        const health = healthById(state);
        for (const l of state.lines) {
          const s = health.get(l.id)?.score;
          if (s !== null && s !== undefined) set({ line: l.name }, s);
        }
      },
    },
    {
      name: "linewatch_line_weight_factor_ratio",
      help: "Health factor 0-1 applied to the line's base weight in every route (graded when degraded, 0.2/0.5 in probation, 0 in cooldown, drained or disabled).",
      labelNames: ["line"],
      fill: (state, set) => {
        const health = healthById(state);
        for (const l of state.lines) {
          set({ line: l.name }, statusOf(l, health.get(l.id)).factor);
        }
      },
    },
    {
      name: "linewatch_line_trend_alert_active",
      help: "1 while a line probes at the fast interval after a trend alert (its score fell more than 20 points within 10 minutes).",
      labelNames: ["line"],
      fill: (state, set) => {
        const now = sources.now();
        const health = healthById(state);
        for (const l of state.lines) {
          const h = health.get(l.id)?.health;
          set({ line: l.name }, h && isFastProbing(h, now) ? 1 : 0);
        }
      },
    },
    {
      name: "linewatch_trend_alerts_total",
      help: "Trend alerts recorded for each line (score drop of more than 20 points within 10 minutes), as the event timeline holds them.",
      labelNames: ["line"],
      type: "counter",
      fill: (state, set) => {
        const counts = new Map(state.trendAlerts.map((t) => [t.lineId, t.count]));
        for (const [id, name] of lineNameById(state)) set({ line: name }, counts.get(id) ?? 0);
      },
    },
    {
      name: "linewatch_line_weight",
      help: "Weight of the line in the route's published table, for every line of the route (a table's weights sum to 10000; 0 = no traffic).",
      labelNames: ["route", "line"],
      fill: (state, set) => {
        const tables = new Map(liveTables(state).map((t) => [t.route, new Map(t.lines.map((l) => [l.lineId, l.weight]))]));
        for (const l of state.lines) {
          for (const { route } of l.routes) {
            const table = tables.get(route);
            // Before a route's first publication there is no weight to report.
            if (table) set({ route, line: l.name }, table.get(l.id) ?? 0);
          }
        }
      },
    },
    {
      name: "linewatch_table_version",
      help: "Version of the route's published table; it goes up by one per publish, so changes() or increase() count publishes.",
      labelNames: ["route"],
      fill: (state, set) => {
        for (const t of liveTables(state)) set({ route: t.route }, t.version);
      },
    },
    {
      name: "linewatch_table_published_timestamp_seconds",
      help: "When the route's current table was published (Unix time).",
      labelNames: ["route"],
      fill: (state, set) => {
        for (const t of liveTables(state)) set({ route: t.route }, t.generatedAt / 1000);
      },
    },
    {
      name: "linewatch_table_mode",
      help: "1 for the mode of the route's table, 0 for the others (normal; degraded: no paid line usable; panic: no line usable).",
      labelNames: ["route", "mode"],
      fill: (state, set) => {
        for (const t of liveTables(state)) for (const m of TABLE_MODES) set({ route: t.route, mode: m }, t.mode === m ? 1 : 0);
      },
    },
  ];

  new Gauge({
    name: "linewatch_database_up",
    help: "1 when this scrape could read the registry, health and tables from the database; 0 when it could not (those series are then absent).",
    registers: [registry],
    async collect() {
      this.set((await scrape()) ? 1 : 0);
    },
  });

  for (const { name, help, labelNames, type, fill } of FROM_STATE) {
    // Set afresh at each scrape: a line or route that is gone leaves no series behind.
    async function collect(this: Gauge | Counter) {
      const state = await scrape();
      this.reset();
      if (!state) return;
      fill(state, (labels, value) => (this instanceof Gauge ? this.set(labels, value) : this.inc(labels, value)));
    }
    const options = { name, help, labelNames, registers: [registry], collect };
    if (type === "counter") new Counter(options);
    else new Gauge(options);
  }

  return {
    registry,
    /** Record one stored probe result of this replica. A result of a line or sample no longer known is skipped. */
    observeProbe(result: StoredProbeResult, names: ProbeNames): void {
      const line = names.lines.get(result.lineId)?.name;
      const sample = names.samples.get(result.sampleId)?.name ?? result.sampleName;
      if (line === undefined || sample === undefined) return;
      let samples = seen.get(line);
      if (!samples) {
        samples = new Set();
        seen.set(line, samples);
      }
      samples.add(sample);
      duration.observe({ line, sample }, result.latencyMs / 1000);
      outcomes.inc({ line, sample, outcome: probeOutcome(result) });
      contentLength.observe({ line }, result.contentLength);
      fields.observe({ line }, result.hardFailure ? 0 : result.components.fields);
      if (result.tokens !== null && result.tokens > 0) tokens.inc({ line }, result.tokens);
    },
    /** A claimed probe started `lateMs` after its due time. */
    observeLateness(lateMs: number): void {
      lateness.observe(Math.max(0, lateMs) / 1000);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

const isAdminState = (s: string): s is AdminState => (ADMIN_STATES as readonly string[]).includes(s);
