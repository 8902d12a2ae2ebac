// Every shipped fingerprint phrasing is long enough for the usage rule to catch a line billing ×1.2
// (docs/scoring.md#usage). Prompt tokens fail above ref + max(4, 10% of ref), the 4 being what two
// honest counts ±2 tokens apart can differ by: ×1.2 of a T-token prompt is 0.2·T over, more than
// that only from T = 23 (0.2·T > 4 needs T ≥ 21, and the rounding of the claim takes it to 23).
// Shorter phrasings let a ×1.2 line pass until its count happens to land high (up to 3 probes in
// bench/detection/relay.ts); at 23 or more the first ×1.2 claim on any phrasing fails.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PROMPT_BAND_TOKENS, PROMPT_SLACK_SHARE, phrasings } from "../../../packages/core/src/index";
import { modelNamed } from "../../../packages/lab/src/fingerprints";
import { FINGERPRINT_BANK, promptTokens } from "../../../packages/lab/src/models";

/** The fewest prompt tokens a bank phrasing may count (derived from core's constants below). */
const MIN_PROMPT_TOKENS = 23;
/**
 * A conservative count for real tokenizers, which pack English denser than the lab's 4 characters a
 * token: 4.5 characters a token (short instructions in cl100k/o200k run 4.4–4.5), plus the 7 tokens a
 * chat request's framing adds to one user message (the lab's overhead too).
 */
const realTokens = (chars: number): number => Math.ceil(chars / 4.5) + 7;

const PROTOCOLS = ["openai-chat", "anthropic-messages", "openai-responses"] as const;

interface ShippedFingerprint {
  name: string;
  protocol: string;
  request: Record<string, unknown>;
  variants?: string[];
}

const shipped: ShippedFingerprint[] = PROTOCOLS.flatMap((protocol) => {
  const dir = new URL(`../../../probes/${protocol}/fingerprint/`, import.meta.url);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => parse(readFileSync(new URL(f, dir), "utf8")) as ShippedFingerprint);
});

/** Characters of the request's prompt besides the user message (a system prompt, `instructions`): counted too. */
function systemChars(request: Record<string, unknown>): number {
  const text = (v: unknown): number => (typeof v === "string" ? v.length : 0);
  const messages = Array.isArray(request.messages) ? (request.messages as Array<{ role?: unknown; content?: unknown }>) : [];
  const fromMessages = messages.filter((m) => m.role === "system" || m.role === "developer").reduce((n, m) => n + text(m.content), 0);
  return fromMessages + text(request.system) + text(request.instructions);
}

describe("the shipped fingerprint bank's prompt lengths", () => {
  it(`${MIN_PROMPT_TOKENS} tokens is where core's prompt rule first catches ×1.2 (an honest line's fewest as the reference)`, () => {
    const caught = (t: number) => Math.round(1.2 * t) > t + Math.max(PROMPT_BAND_TOKENS, PROMPT_SLACK_SHARE * t);
    expect(caught(MIN_PROMPT_TOKENS - 1)).toBe(false);
    for (let t = MIN_PROMPT_TOKENS; t <= 400; t++) expect(caught(t), `${t} tokens`).toBe(true);
  });

  it("holds 10 prompts per protocol, 3 phrasings each", () => {
    expect(shipped).toHaveLength(30);
    for (const s of shipped) expect(phrasings(s), s.name).toHaveLength(3);
  });

  it.each(shipped.map((s) => [s.name, s] as const))(`%s: every phrasing counts ≥ ${MIN_PROMPT_TOKENS} prompt tokens`, (_, s) => {
    const model = modelNamed("gpt-4o-mini");
    for (const text of phrasings(s)) {
      const chars = text.length + systemChars(s.request);
      // The lab counts a bank prompt as its model does (line.ts): the count the usage check sees in tests and benches.
      expect(Math.ceil(chars * model.tokensPerChar) + model.promptOverhead, text).toBeGreaterThanOrEqual(MIN_PROMPT_TOKENS);
      expect(realTokens(chars), text).toBeGreaterThanOrEqual(MIN_PROMPT_TOKENS);
    }
  });

  it("the lab's models answer exactly the shipped phrasings (its bank is the shipped one)", () => {
    for (const s of shipped) {
      const id = s.name.replace(/^(anthropic|responses)-/, "");
      const bank = FINGERPRINT_BANK.find((p) => p.id === id);
      expect(bank, s.name).toBeDefined();
      expect(phrasings(s), s.name).toEqual(bank?.phrasings);
      for (const text of bank?.phrasings ?? []) expect(promptTokens(modelNamed("m"), text)).toBeGreaterThanOrEqual(MIN_PROMPT_TOKENS);
    }
  });
});
