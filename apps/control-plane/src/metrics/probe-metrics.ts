import type { StoredProbeResult } from "@linewatch/db";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { Scrape } from "./scrape-state";

export const PROBE_DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];
/** Characters of the answer (as the scorer counts them); 0 = an empty answer. */
export const CONTENT_LENGTH_BUCKETS = [0, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 65536];
/** Share of a sample's content checks (required fields, contains, matches) an answer met. */
export const FIELD_COMPLETENESS_BUCKETS = [0, 0.25, 0.5, 0.75, 0.99, 1];
/** Seconds: on time is under the 1 s tick; tens of seconds is a backlog. */
export const PROBE_LATENESS_BUCKETS = [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** How a probe ended: passed, failed on content, or the class of its hard failure. */
export type ProbeOutcome = "pass" | "fail" | "timeout" | "connect" | "http_status" | "parse" | "protocol";

const PROBE_OUTCOMES = ["pass", "fail", "timeout", "connect", "http_status", "parse", "protocol"] satisfies ProbeOutcome[];

export function probeOutcome(r: Pick<StoredProbeResult, "passed" | "errorClass">): ProbeOutcome {
  if (r.errorClass) return r.errorClass;
  return r.passed ? "pass" : "fail";
}

/** Names of lines and samples, to label a probe result with. */
export interface ProbeNames {
  lines: ReadonlyMap<string, { name: string }>;
  samples: ReadonlyMap<string, { name: string }>;
}

/** What this replica's probes are counted in: labelled by line (and sample). */
function probeSeries(registry: Registry, collect: () => Promise<void>) {
  const byLine = <L extends string>(name: string, help: string, labelNames: readonly L[]) => ({
    name,
    help,
    labelNames,
    registers: [registry],
    collect,
  });
  return {
    duration: new Histogram({
      ...byLine(
        "linewatch_probe_duration_seconds",
        "Time from sending a probe until its answer was read (or it timed out), by line and sample.",
        ["line", "sample"] as const,
      ),
      buckets: PROBE_DURATION_BUCKETS,
    }),
    outcomes: new Counter(
      byLine(
        "linewatch_probes_total",
        "Probes this replica ran, by line, sample and outcome (pass, fail = bad content, or the hard failure: timeout, connect, http_status, parse, protocol).",
        ["line", "sample", "outcome"] as const,
      ),
    ),
    contentLength: new Histogram({
      ...byLine(
        "linewatch_probe_content_length_characters",
        "Length of the answers to probes in characters (as the scorer counts them), by line.",
        ["line"] as const,
      ),
      buckets: CONTENT_LENGTH_BUCKETS,
    }),
    fields: new Histogram({
      ...byLine(
        "linewatch_probe_field_completeness_ratio",
        "Share of a sample's content checks (required fields, contains, matches) each answer met, 0-1, by line; hard failures count as 0.",
        ["line"] as const,
      ),
      buckets: FIELD_COMPLETENESS_BUCKETS,
    }),
    tokens: new Counter(
      byLine("linewatch_probe_tokens_total", "Tokens this replica's probes spent (usage.total_tokens of the answers), by line.", [
        "line",
      ] as const),
    ),
    // Billing evidence (docs/scoring.md#what-a-relay-can-fake): counted only where a reference
    // expected a count, so claimed / expected compares like with like.
    usageTokens: new Counter(
      byLine(
        "linewatch_usage_tokens_total",
        "Billing evidence: tokens the line's answers to probes claimed (kind=claimed) and the tokens the same prompts cost on its own anchor and its paid peers (kind=expected), by line and direction (input, output); counted only for probes that had a reference.",
        ["line", "kind", "direction"] as const,
      ),
    ),
  };
}

const USAGE_SERIES = [
  ["claimed", "input"],
  ["expected", "input"],
  ["claimed", "output"],
  ["expected", "output"],
] as const;

type ProbeSeries = ReturnType<typeof probeSeries>;

/**
 * Drops the series of lines and samples that are gone (or renamed) from the registry, once per
 * scrape. `seen` holds the label sets this replica has emitted, per line name.
 */
function seriesPruner(series: ProbeSeries, scrape: Scrape, seen: Map<string, Set<string>>): () => Promise<void> {
  const removeSeries = (line: string, sample: string) => {
    series.duration.remove({ line, sample });
    for (const outcome of PROBE_OUTCOMES) series.outcomes.remove({ line, sample, outcome });
  };
  let pruning: Promise<void> | null = null;
  return () =>
    (pruning ??= scrape()
      .then((state) => {
        if (!state) return;
        const lineNames = new Set(state.lines.map((l) => l.name));
        const sampleNames = new Set(state.samples.map((s) => s.name));
        for (const [line, samples] of seen) {
          if (!lineNames.has(line)) {
            for (const sample of samples) removeSeries(line, sample);
            series.contentLength.remove({ line });
            series.fields.remove({ line });
            series.tokens.remove({ line });
            for (const [kind, direction] of USAGE_SERIES) series.usageTokens.remove({ line, kind, direction });
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
}

/** What this replica's probes did (counted as results come in, so `sum()` across replicas gives the fleet's figures). */
export function registerProbeMetrics(registry: Registry, scrape: Scrape, inFlight: () => number) {
  const seen = new Map<string, Set<string>>();
  // Labelled by line (and sample): a series of a line or sample that is gone is dropped at scrape
  // (collect runs at scrape time, when pruneGone is set).
  const series = probeSeries(registry, () => pruneGone());
  const pruneGone = seriesPruner(series, scrape, seen);
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
      this.set(inFlight());
    },
  });
  return {
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
      series.duration.observe({ line, sample }, result.latencyMs / 1000);
      series.outcomes.inc({ line, sample, outcome: probeOutcome(result) });
      series.contentLength.observe({ line }, result.contentLength);
      series.fields.observe({ line }, result.hardFailure ? 0 : result.components.fields);
      if (result.tokens !== null && result.tokens > 0) series.tokens.inc({ line }, result.tokens);
      const billing = result.relay?.billing;
      if (billing) {
        const { claimedInput, expectedInput, claimedOutput, expectedOutput } = billing;
        if (claimedInput !== null && expectedInput !== null) {
          series.usageTokens.inc({ line, kind: "claimed", direction: "input" }, claimedInput);
          series.usageTokens.inc({ line, kind: "expected", direction: "input" }, expectedInput);
        }
        if (claimedOutput !== null && expectedOutput !== null) {
          series.usageTokens.inc({ line, kind: "claimed", direction: "output" }, claimedOutput);
          series.usageTokens.inc({ line, kind: "expected", direction: "output" }, expectedOutput);
        }
      }
    },
    /** A claimed probe started `lateMs` after its due time. */
    observeLateness(lateMs: number): void {
      lateness.observe(Math.max(0, lateMs) / 1000);
    },
  };
}
