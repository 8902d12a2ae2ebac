import { createHash, randomBytes } from "node:crypto";
import {
  type BaselineEntry,
  bodyFields,
  claimedUsage,
  computeBaseline,
  fillTemplate,
  getAdapter,
  type Line,
  NONCE_LENGTH,
  type ProbeRelay,
  pickPhrasing,
  probeNonce,
  probeRelay,
  type Sample,
  scoreProbe,
  shapeSignature,
  type UsageClaim,
} from "@linewatch/core";
import type { ProbeResultInsert } from "@linewatch/db";
import type { Agent } from "undici";
import type { AppDeps } from "../deps";
import { lineSecrets, redactOutcome } from "../secrets";
import { clientPlatform } from "./client-platform";
import type { RelayReferences } from "./relay-tracks";
import { type HttpOutcome, sendProbe } from "./send-probe";
import type { StallMeter } from "./stall-meter";

/** Characters of the answer kept with a result, so a human can see why it scored as it did. */
export const EXCERPT_CHARS = 400;
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface ProbeJob {
  line: Line;
  apiKey: string | null;
  sample: Sample;
  /** The line's anchored usual length for the sample, and its peers' (chars); null when unknown. */
  anchoredLength?: number | null;
  peerLength?: number | null;
  /** "schedule" | "manual" | "confirm" */
  trigger: string;
  /** The scheduled slot (ms); null for manual probes. */
  slot: number | null;
  /** What the fingerprint and usage checks are held to; absent: neither is judged. */
  relay?: RelayReferences;
}

/** docs/api.md: the line's timeout, else the sample's, else 10 s. */
export function probeTimeoutMs(line: Pick<Line, "timeoutMs">, sample: Pick<Sample, "timeoutMs">): number {
  return line.timeoutMs ?? sample.timeoutMs ?? DEFAULT_TIMEOUT_MS;
}

const hashContent = (content: string) => createHash("sha256").update(content).digest("hex").slice(0, 32);

/**
 * Send one sample to one line and score the answer against `history` (the pair's latest results,
 * newest first): the result to store. The prober keeps histories in memory and stores in batches.
 */
export async function sendAndScore(
  deps: Pick<AppDeps, "clock">,
  agent: Agent,
  job: ProbeJob,
  history: readonly BaselineEntry[],
  stall?: StallMeter,
  rng: () => number = Math.random,
): Promise<ProbeResultInsert> {
  const { line, sample } = job;
  const startedAt = deps.clock.now();
  const nonce = probeNonce(randomBytes(NONCE_LENGTH));
  const adapter = getAdapter(line.protocol);
  // One of the sample's phrasings, at random, so a relay cannot learn the probes' wording (docs/scoring.md#what-a-relay-can-fake).
  const phrased = pickPhrasing(sample, rng);
  const filled = fillTemplate(phrased.request, { nonce, now: startedAt });
  const request = adapter.buildProbe({ baseUrl: line.baseUrl, model: line.model, headers: line.headers, apiKey: job.apiKey }, filled, {
    platform: clientPlatform,
  });
  const stalledBefore = stall?.reading() ?? 0;
  // An upstream may echo the key it was sent (a 401 body): nothing parsed, stored or shown may carry it.
  const sent: HttpOutcome = redactOutcome(
    await sendProbe(agent, request, probeTimeoutMs(line, sample), () => deps.clock.now()),
    lineSecrets(job.apiKey, line.headers),
  );
  const stalled = (stall?.reading() ?? 0) - stalledBefore;
  const outcome: HttpOutcome = { ...sent, latencyMs: Math.max(0, sent.latencyMs - stalled) };

  let content: string | null = null;
  let json: unknown = null;
  let tokens: number | null = null;
  let claimed: UsageClaim | null = null;
  let shape: string | null = null;
  let errorClass = outcome.errorClass;
  let errorMessage = outcome.errorMessage;
  if (outcome.status !== null) {
    const parsed = adapter.parseResponse(outcome.status, outcome.bodyText);
    if (parsed.ok) {
      ({ content, json, tokens } = parsed);
      claimed = claimedUsage(parsed.usage, json);
      shape = shapeSignature({ id: parsed.id, fields: bodyFields(json) });
    } else {
      errorClass = outcome.status >= 200 && outcome.status < 300 ? parsed.errorClass : "http_status";
      errorMessage = parsed.message;
    }
  }
  const contentHash = content === null ? null : hashContent(content);
  const scored = scoreProbe({
    expect: sample.expect,
    observation: {
      status: outcome.status,
      errorClass,
      latencyMs: outcome.latencyMs,
      content,
      json,
      contentHash,
      nonce,
      ...(errorMessage ? { errorMessage } : {}),
    },
    baseline: computeBaseline(history),
    anchoredLength: job.anchoredLength ?? null,
    peerLength: job.peerLength ?? null,
    ...relayInputs(job.relay, filled, phrased.variant, claimed),
  });
  const relay: ProbeRelay | null = job.relay ? probeRelay(scored, phrased.variant, shape) : null;
  const excerpt = (content ?? (outcome.status !== null ? outcome.bodyText : (errorMessage ?? ""))).slice(0, EXCERPT_CHARS);
  return {
    lineId: line.id,
    sampleId: sample.id,
    startedAt: new Date(startedAt),
    latencyMs: Math.round(outcome.latencyMs),
    status: outcome.status,
    errorClass,
    hardFailure: scored.hardFailure,
    passed: scored.passed,
    score: scored.score,
    components: scored.components,
    checks: scored.checks,
    contentLength: scored.contentLength,
    contentHash,
    excerpt,
    reasons: scored.reasons,
    tokens,
    slot: job.slot,
    trigger: job.trigger,
    relay,
  };
}

/** The fingerprint and usage inputs of scoreProbe: the references, the request as sent, the tokens claimed. */
function relayInputs(
  refs: RelayReferences | undefined,
  request: Record<string, unknown>,
  variant: string,
  claimed: UsageClaim | null,
): Pick<Parameters<typeof scoreProbe>[0], "fingerprint" | "usage"> {
  if (!refs) return {};
  const { track, peers, threshold, shapeChanged } = refs.fingerprint;
  return {
    fingerprint: { request, variant, tier: refs.tier, track, peers, threshold, shapeChanged },
    ...(claimed && (claimed.input !== null || claimed.output !== null)
      ? { usage: { claimed, variant, tier: refs.tier, track: refs.usage.track, peers: refs.usage.peers } }
      : {}),
  };
}
