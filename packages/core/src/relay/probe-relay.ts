// What a relay can fake, as one probe saw it (docs/scoring.md#what-a-relay-can-fake): stored with the
// probe result (a JSON column) and carried to the health machine. The phrasing sent, the fingerprint
// and usage steps the machine applies, the usage check's verdict, the billing evidence (tokens claimed
// against the tokens expected) and the answer's protocol shape. A hard failure has none.
import type { FingerprintStep } from "../fingerprint/track";
import type { HealthProbe } from "../health/health-types";
import type { ScoredProbe } from "../scoring/score-probe";
import type { UsageBilling, UsageStep } from "../usage/usage";

export interface ProbeRelay {
  /** variantKey of the phrasing sent ("" for a request sent as written). */
  variant: string;
  fingerprint: FingerprintStep | null;
  usage: UsageStep | null;
  /** The usage check: its detail when it failed, null when it passed; absent when it was not judged. */
  usageFailure?: string | null;
  billing: UsageBilling | null;
  /** shapeSignature() of the answer. */
  shape: string | null;
}

/** A scored probe's relay record; null for a hard failure (no answer: nothing to learn). */
export function probeRelay(scored: ScoredProbe, variant: string, shape: string | null): ProbeRelay | null {
  if (scored.hardFailure) return null;
  const check = scored.usage?.check ?? null;
  return {
    variant,
    fingerprint: scored.fingerprint?.step ?? null,
    usage: scored.usage?.step ?? null,
    ...(check === null || check.verdict === "broken" ? {} : { usageFailure: check.verdict === "fail" ? (check.detail ?? "failed") : null }),
    billing: scored.usage?.billing ?? null,
    shape,
  };
}

/** The fields of HealthProbe a relay record fills (none for a hard failure). */
export function relayHealthFields(relay: ProbeRelay | null): Pick<HealthProbe, "fingerprint" | "usage" | "shape" | "usageFailure"> {
  if (relay === null) return {};
  return {
    ...(relay.fingerprint ? { fingerprint: relay.fingerprint } : {}),
    ...(relay.usage ? { usage: relay.usage } : {}),
    ...(relay.shape !== null ? { shape: relay.shape } : {}),
    ...(relay.usageFailure !== undefined ? { usageFailure: relay.usageFailure } : {}),
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const countOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);
const numOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** A stored fingerprint step → typed; null when there is none or it cannot be read. */
export function parseFingerprintStep(v: unknown): FingerprintStep | null {
  if (!isRecord(v) || typeof v.variant !== "string" || typeof v.answer !== "string") return null;
  const threshold = numOrNull(v.threshold);
  if (threshold === null || threshold <= 0) return null;
  const step: FingerprintStep = { variant: v.variant, answer: v.answer, own: numOrNull(v.own), peers: numOrNull(v.peers), threshold };
  if (Array.isArray(v.moved)) {
    const moved = v.moved.filter(
      (m): m is NonNullable<FingerprintStep["moved"]>[number] =>
        isRecord(m) &&
        (m.reference === "own" || m.reference === "peers") &&
        typeof m.detail === "string" &&
        Array.isArray(m.anchor) &&
        Array.isArray(m.now),
    );
    if (moved.length > 0) step.moved = moved;
  }
  return step;
}

function parseUsageStep(v: unknown): UsageStep | null {
  if (!isRecord(v) || typeof v.variant !== "string") return null;
  return { variant: v.variant, input: countOrNull(v.input), output: countOrNull(v.output), chars: countOrNull(v.chars) ?? 0 };
}

function parseBilling(v: unknown): UsageBilling | null {
  if (!isRecord(v)) return null;
  return {
    claimedInput: countOrNull(v.claimedInput),
    expectedInput: countOrNull(v.expectedInput),
    claimedOutput: countOrNull(v.claimedOutput),
    expectedOutput: countOrNull(v.expectedOutput),
  };
}

/** A stored relay record → typed; null when there is none or it cannot be read (the probe then carries none). */
export function parseProbeRelay(v: unknown): ProbeRelay | null {
  if (!isRecord(v) || typeof v.variant !== "string") return null;
  const relay: ProbeRelay = {
    variant: v.variant,
    fingerprint: parseFingerprintStep(v.fingerprint),
    usage: parseUsageStep(v.usage),
    billing: parseBilling(v.billing),
    shape: typeof v.shape === "string" ? v.shape : null,
  };
  if (v.usageFailure === null || typeof v.usageFailure === "string") relay.usageFailure = v.usageFailure;
  return relay;
}
