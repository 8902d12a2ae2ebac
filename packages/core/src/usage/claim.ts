// The tokens an answer claims, as the usage check reads them (docs/scoring.md#what-a-relay-can-fake):
// the adapter's prompt and completion tokens, the completion tokens less the reasoning tokens where
// the API reports them (`completion_tokens_details.reasoning_tokens` in chat completions,
// `output_tokens_details.reasoning_tokens` in Responses): a reasoning model's hidden thinking is not
// in the visible answer the completion tokens are held to.
import type { AnswerUsage } from "../protocols/types";
import type { UsageClaim } from "./usage";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const count = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);

/** Reasoning tokens the body's `usage` reports; 0 when it says none. */
function reasoningTokens(json: unknown): number {
  const usage = isRecord(json) ? json.usage : undefined;
  if (!isRecord(usage)) return 0;
  for (const key of ["completion_tokens_details", "output_tokens_details"]) {
    const details = usage[key];
    const n = isRecord(details) ? count(details.reasoning_tokens) : null;
    if (n !== null) return n;
  }
  return 0;
}

/** The claim the usage check judges: prompt tokens, and visible completion tokens. */
export function claimedUsage(usage: AnswerUsage, json: unknown): UsageClaim {
  const output = count(usage.output);
  return { input: count(usage.input), output: output === null ? null : Math.max(0, output - reasoningTokens(json)) };
}
