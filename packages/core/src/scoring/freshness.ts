// Freshness: is this answer new and right? nonce echoed, not the same hash K times in a row,
// the expected answer. Each failed check multiplies the component down.

import { parseJson } from "../protocols/http";
import { STALE_RUN } from "./baseline";
import { brokenCheck, failCheck, type ProbeCheck, passCheck } from "./checks";
import { clamp01 } from "./numbers";
import type { ComponentScore, ScoringContext } from "./score-probe";
import { answerTokens, containsTokens, normalizeAnswer, quote } from "./text";

/** An answer of at most this many words (or 3× the expected answer's) is a "short answer". */
export const SHORT_ANSWER_TOKENS = 8;
/** The expected answer is only somewhere inside a long answer: probably right, not clean. */
export const ANSWER_BURIED_SCORE = 0.5;

export type AnswerVerdict = "exact" | "buried" | "wrong";

/**
 * "exact": the normalized content is the expected answer, or a short answer holds it as whole
 * words ("The journey takes 155 minutes."). "buried": a long answer holds it. Else "wrong".
 */
export function judgeAnswer(content: string, expected: string): AnswerVerdict {
  const want = normalizeAnswer(expected);
  if (want === "") return "exact";
  if (normalizeAnswer(content) === want) return "exact";
  const tokens = answerTokens(content);
  const wanted = answerTokens(expected);
  if (!containsTokens(tokens, wanted)) return "wrong";
  return tokens.length <= Math.max(SHORT_ANSWER_TOKENS, 3 * wanted.length) ? "exact" : "buried";
}

export function scoreFreshness(ctx: ScoringContext): ComponentScore {
  const { expect, observation, baseline, content } = ctx;
  const reasons: string[] = [];
  const checks: ProbeCheck[] = [];
  let score = 1;

  // Case-insensitive: a replayed answer cannot hold this probe's nonce in any case.
  if (expect.nonce === true && observation.nonce !== "") {
    if (!content.toLowerCase().includes(observation.nonce.toLowerCase())) {
      score = 0;
      reasons.push(`nonce ${observation.nonce} not echoed (cached answer?)`);
      checks.push(failCheck("nonce", `nonce ${observation.nonce} not echoed (cached answer?)`));
    } else checks.push(passCheck("nonce"));
  }

  if (expect.varies === true && observation.contentHash !== null) {
    const previous = baseline.recentHashes.slice(0, STALE_RUN - 1);
    if (previous.length === STALE_RUN - 1 && previous.every((h) => h === observation.contentHash)) {
      score = 0;
      const detail = `same answer ${STALE_RUN} probes in a row (hash ${observation.contentHash.slice(0, 12)}): stale cache?`;
      reasons.push(detail);
      checks.push(failCheck("varies", detail));
    } else checks.push(passCheck("varies"));
  }

  if (expect.answer !== undefined) {
    if (isStructured(content)) {
      // A JSON answer has no text to compare: the sample asks the impossible, the line is not at fault.
      checks.push(brokenCheck("answer", "the answer is JSON, not text: an expected answer cannot be compared"));
      reasons.push("the sample's expected answer cannot be checked against a JSON answer (ignored)");
    } else {
      const verdict = judgeAnswer(content, expect.answer);
      if (verdict === "wrong") {
        score = 0;
        reasons.push(`wrong answer: expected ${quote(expect.answer)}, got ${quote(content)}`);
        checks.push(failCheck("answer", `expected ${quote(expect.answer)}, got ${quote(content)}`));
      } else {
        if (verdict === "buried") {
          score *= ANSWER_BURIED_SCORE;
          reasons.push(`expected answer ${quote(expect.answer)} only found inside a long answer`);
        }
        checks.push(passCheck("answer"));
      }
    }
  }

  return { score: clamp01(score), reasons, checks };
}

/** An object or array answer (JSON), whole or as the whole of one fenced block: an expected text answer cannot be compared with it. */
function isStructured(content: string): boolean {
  const trimmed = content.trim();
  const fenced = /^```[a-zA-Z]*[ \t]*\r?\n?([\s\S]*?)```$/.exec(trimmed);
  const body = (fenced?.[1] ?? trimmed).trim();
  if (!/^[[{]/.test(body)) return false;
  const parsed = parseJson(body);
  return parsed.ok && typeof parsed.value === "object" && parsed.value !== null;
}
