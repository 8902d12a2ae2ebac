import type { Sample } from "@linewatch/core";
import { errorSummary, type ProbeResultInsert } from "@linewatch/db";
import pLimit from "p-limit";
import type { Agent } from "undici";
import type { AppDeps } from "../deps";
import type { CachedLine } from "../registry-cache";
import type { BaselineCache } from "./baseline-cache";
import type { ProbeLengths } from "./length-anchors";
import type { RelayReferences } from "./relay-tracks";
import { probeTimeoutMs, sendAndScore } from "./run-probe";
import { createProbeAgent } from "./send-probe";
import { StallMeter } from "./stall-meter";

export interface ProberStats {
  inFlight: number;
  peakInFlight: number;
  sent: number;
}

/** What a probe is: which sample to which line, why, for which slot, and the lengths it is held to. */
export interface ProbeOrder {
  line: CachedLine;
  sample: Sample;
  /** "schedule" | "manual" | "confirm" */
  trigger: string;
  /** The scheduled slot (ms); null for manual probes. */
  slot: number | null;
  lengths: ProbeLengths;
  /** What the fingerprint and usage checks are held to. */
  relay: RelayReferences;
}

/**
 * Sends probes and scores their answers, at most `maxInFlight` at once, each bounded by its timeout,
 * on one keep-alive agent behind the upstream guard.
 */
export class ProbeSender {
  readonly agent: Agent;
  private readonly stall = new StallMeter();
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly counts: ProberStats = { inFlight: 0, peakInFlight: 0, sent: 0 };

  constructor(
    private readonly deps: Pick<AppDeps, "clock" | "logger" | "config" | "dnsLookup">,
    private readonly baselines: BaselineCache,
    private readonly hooks: {
      /** A scheduled probe starts, `lateMs` after its slot. */
      onStart?(lateMs: number): void;
      /** A probe is scored (or could not run): its slot is free. */
      onSent(): void;
    },
    /** Picks each probe's phrasing. */
    private readonly rng: () => number = Math.random,
  ) {
    this.agent = createProbeAgent(deps.config.allowUpstreamHosts, deps.dnsLookup);
    this.limit = pLimit(deps.config.maxInFlight);
  }

  stats(): ProberStats {
    return { ...this.counts };
  }

  /**
   * Send and score within the in-flight bound; the slot is free again as soon as the answer is
   * scored (storing it is not the upstream's business). Null when the probe could not run (logged).
   */
  async send(order: ProbeOrder): Promise<ProbeResultInsert | null> {
    try {
      return await this.limit(() => this.probe(order));
    } catch (error) {
      const { line, sample } = order;
      this.deps.logger.error("probe failed to run", {
        line: line.name,
        sample: sample.name,
        timeoutMs: probeTimeoutMs(line, sample),
        ...errorSummary(error),
      });
      return null;
    } finally {
      this.hooks.onSent();
    }
  }

  private async probe({ line, sample, trigger, slot, lengths, relay }: ProbeOrder): Promise<ProbeResultInsert> {
    this.counts.inFlight++;
    this.counts.peakInFlight = Math.max(this.counts.peakInFlight, this.counts.inFlight);
    this.counts.sent++;
    if (slot !== null) this.hooks.onStart?.(this.deps.clock.now() - slot);
    this.stall.begin();
    try {
      const history = this.baselines.history(line.id, sample.id);
      return await sendAndScore(
        this.deps,
        this.agent,
        { line, apiKey: line.apiKey, sample, trigger, slot, ...lengths, relay },
        history,
        this.stall,
        this.rng,
      );
    } finally {
      this.stall.end();
      this.counts.inFlight--;
    }
  }

  async close(): Promise<void> {
    this.stall.stop();
    await this.agent.close();
  }
}
