// The fault model of the detection benchmark: which lab content fault and which latency a probe of
// each shipped sample meets, when. Scores come from core's scorer (see test/sim/lab-upstream.ts).
import type { FaultSetting } from "../../packages/lab/src/modes";
import type { ShippedSample } from "../../test/sim/lab-upstream";
import { logNormal } from "../../test/sim/rng";
import { BASE_LATENCY_MS, lab, type Respond } from "../../test/sim/upstreams";

export const FAULT_KINDS = ["truncate", "stale", "drop-fields", "downgrade", "latency-creep"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Latency creep: an upstream queue that grows by this much per ms of time (2 s per minute). */
export const CREEP_PER_MS = 2_000 / 60_000;

export interface FaultPlan {
  kind: FaultKind;
  /** The fault starts (for creep: the queue starts to grow). */
  onset: number;
  /** The upstream is well again. */
  end: number;
  /** From here requests are served badly: the onset, or for creep when the first sample's answers stop arriving within its timeout. */
  badStart: number;
}

/**
 * Latency alone never fails a probe below the timeout (docs/scoring.md): it lowers the score, and so the
 * graded weight. A creeping line is bad (its answers are lost) once a sample's latency passes its timeout.
 */

export function planFault(kind: FaultKind, onset: number, end: number, samples: readonly ShippedSample[]): FaultPlan {
  if (kind !== "latency-creep") return { kind, onset, end, badStart: onset };
  const first = Math.min(...samples.map((s) => (s.timeoutMs - (BASE_LATENCY_MS[s.name] ?? 1000)) / CREEP_PER_MS));
  return { kind, onset, end, badStart: onset + Math.ceil(first) };
}

const CONTENT: Record<Exclude<FaultKind, "latency-creep">, FaultSetting> = {
  truncate: { mode: "truncate", fraction: 0.3 },
  stale: { mode: "stale" },
  "drop-fields": { mode: "drop-fields", fields: null },
  downgrade: { mode: "downgrade" },
};

/** The faulty line as a probe sees it; `seed` makes each checker's probes differ, the plan is shared. */
export function faultyLine(plan: FaultPlan, name: string, seed: number): Respond {
  const inFault = (at: number) => at >= plan.onset && at < plan.end;
  return lab({
    name,
    seed,
    faultAt: (at) => (inFault(at) && plan.kind !== "latency-creep" ? CONTENT[plan.kind] : { mode: "ok" }),
    latencyAt: (sample, at, rng) => {
      const usual = (BASE_LATENCY_MS[sample.name] ?? 1000) * logNormal(rng, 0.2);
      if (!inFault(at)) return usual;
      switch (plan.kind) {
        case "stale":
          return 50 * logNormal(rng, 0.3); // a cache answers at once
        case "downgrade":
          return usual * 0.6; // a smaller model is faster
        case "latency-creep":
          return usual + CREEP_PER_MS * (at - plan.onset);
        default:
          return usual;
      }
    },
  });
}
