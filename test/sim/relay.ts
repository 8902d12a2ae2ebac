// A relay line for the simulations (docs/scoring.md#what-a-relay-can-fake): the shipped golden
// samples answered by the lab (test/sim/lab-upstream.ts) and the starter bank's fingerprint prompts
// answered by the lab's simulated models (packages/lab/src/models.ts), whichever model the relay
// serves; usage reported as the relay reports it; every answer scored by core's scoreProbe with the
// fingerprint and usage references a prober would pass (the line's health, its route mates').
import {
  type BaselineEntry,
  bodyFields,
  computeBaseline,
  type FingerprintPeer,
  fingerprintThreshold,
  fnv1a32,
  type Health,
  interleave,
  openAiChatAdapter,
  scoreProbe,
  shapeChangedRecently,
  shapeSignature,
  type UsagePeer,
  variantKey,
} from "../../packages/core/src/index";
import {
  answerText,
  completionTokens,
  FINGERPRINT_BANK,
  type FingerprintPrompt,
  promptTokens,
  reportedTokens,
  type Serving,
  type SimModel,
} from "../../packages/lab/src/models";
import type { FaultSetting } from "../../packages/lab/src/modes";
import { chatCompletionBody } from "../../packages/lab/src/openai";
import type { ProbeKind, RespondContext, SimOutcome, SimSample } from "./fleet";
import { type AnswerNoise, LabUpstream, type ShippedSample } from "./lab-upstream";
import { hex, logNormal, mulberry32 } from "./rng";
import { BASE_LATENCY_MS, type Respond, SHIPPED, SIM_SAMPLES } from "./upstreams";

/** The starter bank's prompts as samples (answers are short and quick). */
export const FINGERPRINT_SAMPLES: SimSample[] = FINGERPRINT_BANK.map((p) => ({ id: p.id, timeoutMs: 10_000 }));
/** Every sample a relay line is probed with: the 4 golden ones spread among the bank's (core's interleave). */
export const RELAY_SAMPLES: SimSample[] = interleave(SIM_SAMPLES, FINGERPRINT_SAMPLES);
const FINGERPRINT_LATENCY_MS = 600;

/** How a relay reports usage from a time on: × factor, + offset, ± jitter tokens. */
export interface UsageReport {
  factor?: number;
  offset?: number;
  jitter?: number;
}

export interface RelayOptions {
  name: string;
  seed: number;
  /** The real model the line names (its usage counts are that model's unless it serves another). */
  real: SimModel;
  /** Which model answers at `at` (a relay, from models.ts). */
  servingAt: (at: number) => Serving;
  usageAt?: (at: number) => UsageReport;
  /** Headers probes carry, as a relay sees them (the design sends none that mark a probe). */
  probeHeaders?: Record<string, string>;
  /** The body a model other than the real one comes back in (another provider's shape); default: the same shape. */
  rewriteFor?: (model: SimModel, body: Record<string, unknown>, rng: () => number) => Record<string, unknown>;
  /** Golden samples: the lab's content fault, and the noise of a real upstream (test/sim/upstreams.ts REAL_NOISE). */
  faultAt?: (at: number, sample: ShippedSample) => FaultSetting;
  latencyAt?: (sample: ShippedSample, at: number, rng: () => number) => number;
  noiseAt?: (sample: ShippedSample, at: number, rng: () => number) => AnswerNoise;
}

/** Another provider's body: an id of another format, and without `refusal`; with `system_fingerprint`. */
export function otherProviderBody(body: Record<string, unknown>, rng: () => number): Record<string, unknown> {
  const choices = (body.choices as Array<Record<string, unknown>>).map((c) => {
    const { refusal: _refusal, ...message } = c.message as Record<string, unknown>;
    return { ...c, message };
  });
  const uuid = `${hex(rng, 8)}-${hex(rng, 4)}-${hex(rng, 4)}-${hex(rng, 4)}-${hex(rng, 12)}`;
  return { ...body, id: `chatcmpl-${uuid}`, choices, system_fingerprint: `fp_${hex(rng, 10)}` };
}

const usagePeers = (ctx: RespondContext | undefined, sampleId: string): UsagePeer[] =>
  (ctx?.peers() ?? []).map((p) => ({ tier: p.tier, track: p.health.usage[sampleId] }));
const fingerprintPeers = (ctx: RespondContext | undefined, sampleId: string): FingerprintPeer[] =>
  (ctx?.peers() ?? []).map((p) => ({ tier: p.tier, track: p.health.fingerprints[sampleId] }));

/** The relay line as a probe sees it. */
export function relayLine(o: RelayOptions): Respond {
  const rng = mulberry32(o.seed);
  const answerRng = mulberry32(o.seed ^ 0x2545f491);
  const upstream = new LabUpstream(o.name, mulberry32(o.seed ^ 0x5bd1e995));
  const shipped = new Map(SHIPPED.map((s) => [s.name, s]));
  const bank = new Map(FINGERPRINT_BANK.map((p) => [p.id, p]));
  const history = new Map<string, BaselineEntry[]>();
  const headers = o.probeHeaders ?? {};

  const report = (at: number, trueTokens: number) => reportedTokens(trueTokens, o.usageAt?.(at) ?? {}, rng);
  const rewrite = (model: SimModel) => (body: Record<string, unknown>) =>
    model !== o.real && o.rewriteFor ? o.rewriteFor(model, body, rng) : body;

  function golden(sample: ShippedSample, at: number, health: Health | undefined, ctx: RespondContext | undefined): SimOutcome {
    const latency = o.latencyAt ? o.latencyAt(sample, at, rng) : (BASE_LATENCY_MS[sample.name] ?? 1000) * logNormal(rng, 0.2);
    const model = o.servingAt(at)({ promptId: sample.name, phrasing: 0, headers }, rng);
    const out = upstream.probe(sample, at, o.faultAt?.(at, sample) ?? { mode: "ok" }, latency, o.noiseAt?.(sample, at, rng), null, {
      rewrite: rewrite(model),
      usage: {
        report: (input, output) => ({ input: report(at, input), output: report(at, output) }),
        references: { variant: "", tier: ctx?.tier ?? "paid", track: health?.usage[sample.name], peers: usagePeers(ctx, sample.name) },
      },
    });
    return { ...out, usage: out.usageJudgment?.step ?? null };
  }

  function fingerprint(p: FingerprintPrompt, at: number, health: Health | undefined, ctx: RespondContext | undefined): SimOutcome {
    const phrasing = Math.floor(rng() * p.phrasings.length);
    const text = p.phrasings[phrasing] as string;
    const request = { messages: [{ role: "user", content: text }], max_tokens: p.maxTokens, temperature: 0 };
    const model = o.servingAt(at)({ promptId: p.id, phrasing, headers }, rng);
    const content = answerText(model, p.id, phrasing, answerRng);
    const id = `chatcmpl-${hex(rng, 24)}`; // the lab's own id format (line.ts)
    const trueUsage = { prompt_tokens: promptTokens(model, text), completion_tokens: completionTokens(model, content) };
    const body = rewrite(model)(
      chatCompletionBody({
        id,
        created: Math.floor(at / 1000),
        model: "lab-model",
        content,
        finishReason: "stop",
        usage: { ...trueUsage, total_tokens: trueUsage.prompt_tokens + trueUsage.completion_tokens },
      }),
    );
    const parsed = openAiChatAdapter.parseResponse(200, JSON.stringify(body));
    const latencyMs = FINGERPRINT_LATENCY_MS * logNormal(rng, 0.3);
    const past = history.get(p.id) ?? [];
    const json = parsed.ok ? (parsed.json as { id?: unknown }) : null;
    const answer = parsed.ok ? parsed.content : null;
    const scored = scoreProbe({
      expect: { fingerprint: { form: p.form, ...(p.options ? { options: [...p.options] } : {}) }, maxLatencyMs: 4000 },
      observation: {
        status: 200,
        errorClass: parsed.ok ? null : parsed.errorClass,
        latencyMs,
        content: answer,
        json,
        contentHash: answer === null ? null : fnv1a32(answer).toString(16),
        nonce: "",
      },
      baseline: computeBaseline(past),
      fingerprint: {
        request,
        variant: variantKey(text),
        tier: ctx?.tier ?? "paid",
        track: health?.fingerprints[p.id],
        peers: fingerprintPeers(ctx, p.id),
        threshold: fingerprintThreshold({ samples: FINGERPRINT_BANK.length, intervalMs: ctx?.intervalMs ?? 45_000 }),
        shapeChanged: shapeChangedRecently(health?.shape, at),
      },
      usage: {
        claimed: { input: report(at, trueUsage.prompt_tokens), output: report(at, trueUsage.completion_tokens) },
        variant: variantKey(text),
        tier: ctx?.tier ?? "paid",
        track: health?.usage[p.id],
        peers: usagePeers(ctx, p.id),
      },
    });
    past.unshift({
      contentLength: scored.contentLength,
      latencyMs,
      passed: scored.passed,
      contentHash: null,
      hardFailure: scored.hardFailure,
    });
    if (past.length > 20) past.length = 20;
    history.set(p.id, past);
    return {
      score: scored.score,
      passed: scored.passed,
      hardFailure: scored.hardFailure,
      latencyMs,
      contentLength: scored.contentLength,
      fingerprint: scored.fingerprint?.step ?? null,
      usage: scored.usage?.step ?? null,
      shape: json ? shapeSignature({ id: typeof json.id === "string" ? json.id : null, fields: bodyFields(json) }) : null,
      failedChecks: scored.checks.filter((c) => c.verdict === "fail").map((c) => c.name),
    };
  }

  return (s: SimSample, at: number, _kind: ProbeKind, health?: Health, ctx?: RespondContext): SimOutcome => {
    const p = bank.get(s.id);
    if (p) return fingerprint(p, at, health, ctx);
    const sample = shipped.get(s.id);
    if (!sample) throw new Error(`no sample ${s.id}`);
    return golden(sample, at, health, ctx);
  };
}
