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
  computeBaseline,
  fillTemplate,
  openAiChatAdapter,
  type ProbeObservation,
  type SampleExpect,
  scoreProbe,
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
  ): ScoredOutcome {
    const nonce = `lw-${hex(this.rng, 12)}`;
    const history = this.history.get(sample.name) ?? [];
    const baseline = computeBaseline(history);
    const timedOut = latencyMs > sample.timeoutMs;
    let observation: ProbeObservation;
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
      const parsed = openAiChatAdapter.parseResponse(200, JSON.stringify(chatCompletionBody(scaled)));
      const content = parsed.ok ? parsed.content : null;
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
    const scored = scoreProbe({ expect: sample.expect, observation, baseline, anchoredLength });
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
    };
  }
}
