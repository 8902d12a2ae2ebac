// Upstream models for the simulations: synthetic ones (exact, fast) and the lab-backed one
// (real answers under a content fault, scored by core's scorer).
import { anchoredLength, type Health } from "../../packages/core/src/index";
import type { FaultSetting } from "../../packages/lab/src/modes";
import type { ProbeKind, RespondContext, SimOutcome, SimSample } from "./fleet";
import { type AnswerNoise, LabUpstream, loadShippedSamples, type ShippedSample } from "./lab-upstream";
import { logNormal, mulberry32 } from "./rng";

export const SHIPPED = loadShippedSamples();
export const SIM_SAMPLES: SimSample[] = SHIPPED.map((s) => ({ id: s.name, timeoutMs: s.timeoutMs }));

/** Typical latency of a healthy line per shipped sample (ms). */
export const BASE_LATENCY_MS: Record<string, number> = {
  "json-fields": 2000,
  "long-explainer": 5000,
  "nonce-echo": 1000,
  "travel-minutes": 800,
};

export type Respond = (sample: SimSample, at: number, kind: ProbeKind, health?: Health, ctx?: RespondContext) => SimOutcome;

export const healthy = (seed = 1): Respond => {
  const rng = mulberry32(seed);
  return (s) => ({
    score: 95 + Math.floor(rng() * 6),
    passed: true,
    hardFailure: false,
    latencyMs: (BASE_LATENCY_MS[s.id] ?? 1000) * logNormal(rng, 0.2),
  });
};

/** Connect errors: a hard failure after 100 ms. */
export const down = (): Respond => () => ({ score: 0, passed: false, hardFailure: true, latencyMs: 100 });

/** Each probe passes with probability `p`, else a content failure (score 40). */
export const flaky = (p: number, seed = 1): Respond => {
  const rng = mulberry32(seed);
  return (s) => {
    const ok = rng() < p;
    return { score: ok ? 98 : 40, passed: ok, hardFailure: false, latencyMs: BASE_LATENCY_MS[s.id] ?? 1000 };
  };
};

/** Switches between upstream models over time. */
export const phases =
  (...parts: Array<[from: number, respond: Respond]>): Respond =>
  (s, at, kind) => {
    let current = parts[0]![1];
    for (const [from, r] of parts) if (at >= from) current = r;
    return current(s, at, kind);
  };

export interface LabOptions {
  name: string;
  seed: number;
  /** The content fault in force at `at` (default ok). */
  faultAt?: (at: number, sample: ShippedSample) => FaultSetting;
  /** Latency of a probe of `sample` started at `at`; default: base × log-normal(0.2). */
  latencyAt?: (sample: ShippedSample, at: number, rng: () => number) => number;
  /** What else goes wrong with this answer (HTTP 500, its length); default nothing. */
  noiseAt?: (sample: ShippedSample, at: number, rng: () => number) => AnswerNoise;
}

/**
 * The noise of a real upstream that is working (the model): latency log-normal σ 0.5 around
 * the sample's usual, 1% of answers 3× slower, 0.5% HTTP 500, 0.5% timeouts, plain-text answers
 * ±40% of their usual length.
 */
export const REAL_NOISE = {
  latencyAt: (sample: ShippedSample, _at: number, rng: () => number): number => {
    if (rng() < 0.005) return sample.timeoutMs + 1;
    return (BASE_LATENCY_MS[sample.name] ?? 1000) * logNormal(rng, 0.5) * (rng() < 0.01 ? 3 : 1);
  },
  noiseAt: (_sample: ShippedSample, _at: number, rng: () => number): AnswerNoise => ({
    http500: rng() < 0.005,
    lengthScale: 0.6 + 0.8 * rng(),
  }),
} as const;

/** The lab line behind core's scorer. */
export function lab(opts: LabOptions): Respond {
  const rng = mulberry32(opts.seed);
  const upstream = new LabUpstream(opts.name, mulberry32(opts.seed ^ 0x5bd1e995));
  const byId = new Map(SHIPPED.map((s) => [s.name, s]));
  return (s, at, _kind, health) => {
    const sample = byId.get(s.id)!;
    const latency = opts.latencyAt ? opts.latencyAt(sample, at, rng) : (BASE_LATENCY_MS[s.id] ?? 1000) * logNormal(rng, 0.2);
    const anchored = health ? anchoredLength(health.lengths[s.id]) : null;
    return upstream.probe(sample, at, opts.faultAt?.(at, sample) ?? { mode: "ok" }, latency, opts.noiseAt?.(sample, at, rng), anchored);
  };
}
