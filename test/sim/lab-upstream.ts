// A realistic simulated upstream: the lab's answer generator (packages/lab) under a content fault,
// read by the openai-chat adapter and scored by core's scoreProbe against the shipped samples,
// with the line's own rolling baseline. Latency is the caller's model; past the timeout a probe is
// a hard failure (timeout). No HTTP, no clock: the simulation gives the time.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { fnv1a32 } from "@linewatch/core";
import { parse } from "yaml";
import {
  type BaselineEntry,
  bodyFields,
  computeBaseline,
  fillTemplate,
  openAiChatAdapter,
  type ProbeObservation,
  type SampleExpect,
  scoreProbe,
  shapeSignature,
  type UsageClaim,
  type UsageInput,
  type UsageJudgment,
} from "../../packages/core/src/index";
import { VirtualLine } from "../../packages/lab/src/line";
import type { FaultSetting } from "../../packages/lab/src/modes";
import { chatCompletionBody } from "../../packages/lab/src/openai";
import { viewChat } from "../../packages/lab/src/prompt";
import { hex } from "./rng";

export interface ShippedSample {
  name: string;
  request: Record<string, unknown>;
  expect: SampleExpect;
  timeoutMs: number;
}

/** The golden samples shipped in probes/openai-chat. */
export function loadShippedSamples(): ShippedSample[] {
  const dir = fileURLToPath(new URL("../../probes/openai-chat/", import.meta.url));
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((f) => {
      const doc = parse(readFileSync(dir + f, "utf8")) as ShippedSample & { timeoutMs?: number };
      return { name: doc.name, request: doc.request, expect: doc.expect, timeoutMs: doc.timeoutMs ?? 10_000 };
    });
}

export interface ScoredOutcome {
  score: number;
  passed: boolean;
  hardFailure: boolean;
  /** Time until the result is known: the latency, or the timeout. */
  latencyMs: number;
  reasons: string[];
  contentLength: number;
  /** The usage judgment, when the caller asked for one. */
  usageJudgment?: UsageJudgment;
  /** The answer's shape signature, when the caller gave a body rewrite (identity included); null otherwise. */
  shape?: string | null;
  failedChecks: string[];
}

/** The usage check of a probe: what the relay reports for the true counts, and the references it is held to. */
export interface UsageProbe {
  report: (trueInput: number, trueOutput: number) => UsageClaim;
  references: Omit<UsageInput, "answerChars" | "claimed">;
}

/** What goes wrong with one answer beside the content fault: the noise of a real upstream. */
export interface AnswerNoise {
  /** The upstream answers HTTP 500 (at once) instead. */
  http500?: boolean;
  /**
   * Plain-text answers of more than 60 characters come back this many times as long (a model's
   * own variation): cut at a word, or longer by repeating its sentences.
   */
  lengthScale?: number;
}

/** `content` scaled to about `scale` × its length, at word boundaries; JSON and short answers are left alone. */
export function scaleLength(content: string, scale: number): string {
  if (scale === 1 || content.length <= 60 || /^\s*[[{]/.test(content)) return content;
  const target = Math.max(1, Math.round(content.length * scale));
  if (target < content.length) {
    const cut = content.lastIndexOf(" ", target);
    return content.slice(0, cut > 0 ? cut : target);
  }
  let out = content;
  const sentences = content.split(/(?<=[.!?])\s+/);
  for (let i = 0; out.length < target; i++) out += ` ${sentences[i % sentences.length]}`;
  return out.slice(0, target);
}

export class LabUpstream {
  private readonly line: VirtualLine;
  private readonly history = new Map<string, BaselineEntry[]>();

  constructor(
    name: string,
    private readonly rng: () => number,
  ) {
    this.line = new VirtualLine({ name, seed: name });
  }

  /** One probe of `sample` at `at` under `fault` (a content fault, or ok), answered after `latencyMs`. */
  probe(
    sample: ShippedSample,
    at: number,
    fault: FaultSetting,
    latencyMs: number,
    noise: AnswerNoise = {},
    anchoredLength: number | null = null,
    extra: { usage?: UsageProbe; rewrite?: (body: Record<string, unknown>) => Record<string, unknown> } = {},
  ): ScoredOutcome {
    const usageProbe = extra.usage ?? null;
    let shape: string | null = null;
    const nonce = `lw-${hex(this.rng, 12)}`;
    const history = this.history.get(sample.name) ?? [];
    const baseline = computeBaseline(history);
    const timedOut = latencyMs > sample.timeoutMs;
    let observation: ProbeObservation;
    let claimed: UsageClaim | null = null;
    if (noise.http500 && !timedOut) {
      observation = { status: 500, errorClass: "http_status", latencyMs, content: null, json: null, contentHash: null, nonce };
    } else if (timedOut) {
      observation = {
        status: null,
        errorClass: "timeout" as const,
        latencyMs: sample.timeoutMs,
        content: null,
        json: null,
        contentHash: null,
        nonce,
      };
    } else {
      const filled = fillTemplate(sample.request, { nonce, now: at }) as { messages: unknown[]; response_format?: unknown };
      const view = viewChat(filled.messages, filled.response_format);
      const seq = this.line.arrive("chat.completions");
      const reply = this.line.reply("chat.completions", "lab-model", view, seq, fault, at);
      const scaled = { ...reply, content: scaleLength(reply.content, noise.lengthScale ?? 1) };
      const body = chatCompletionBody(scaled);
      const parsed = openAiChatAdapter.parseResponse(200, JSON.stringify(extra.rewrite ? extra.rewrite(body) : body));
      const content = parsed.ok ? parsed.content : null;
      if (parsed.ok && extra.rewrite) {
        const json = parsed.json as { id?: unknown };
        shape = shapeSignature({ id: typeof json.id === "string" ? json.id : null, fields: bodyFields(json) });
      }
      // The counts of the answer as it came (after the length noise), then as the relay reports them.
      if (usageProbe && reply.usage && content !== null)
        claimed = usageProbe.report(reply.usage.prompt_tokens, Math.max(1, Math.ceil(content.length / 4)));
      observation = {
        status: 200,
        errorClass: parsed.ok ? null : parsed.errorClass,
        latencyMs,
        content,
        json: parsed.ok ? parsed.json : null,
        contentHash: content === null ? null : fnv1a32(content).toString(16),
        nonce,
      };
    }
    const scored = scoreProbe({
      expect: sample.expect,
      observation,
      baseline,
      anchoredLength,
      ...(usageProbe && claimed ? { usage: { ...usageProbe.references, claimed } } : {}),
    });
    history.unshift({
      contentLength: scored.contentLength,
      latencyMs: observation.latencyMs,
      passed: scored.passed,
      contentHash: observation.contentHash,
      hardFailure: scored.hardFailure,
    });
    if (history.length > 20) history.length = 20;
    this.history.set(sample.name, history);
    return {
      score: scored.score,
      passed: scored.passed,
      hardFailure: scored.hardFailure,
      latencyMs: observation.latencyMs,
      reasons: scored.reasons,
      contentLength: scored.contentLength,
      ...(scored.usage ? { usageJudgment: scored.usage } : {}),
      shape: scored.hardFailure ? null : shape,
      failedChecks: scored.checks.filter((c) => c.verdict === "fail").map((c) => c.name),
    };
  }
}
