// Fields: the share of the sample's content expectations the answer meets — requiredFields, each
// `contains` string and the `matches` pattern count one each — for the score; and their checks:
// any one missing required field, absent string or pattern miss fails its check.
import { brokenCheck, failCheck, type ProbeCheck, passCheck } from "./checks";
import { getPath } from "./json-path";
import { clamp01 } from "./numbers";
import type { ComponentScore, ScoringContext } from "./score-probe";
import { type AnswerJson, parseAnswerJson, quote } from "./text";

const CONTENT_PREFIX = "content.";

/** Present: not undefined, null, a blank string or an empty array. */
function isPresent(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === "string") return value.trim() !== "";
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

/** `/pattern/flags` or a bare pattern; null when it does not compile. */
export function compilePattern(pattern: string): RegExp | null {
  const literal = /^\/([\s\S]+)\/([dgimsuvy]*)$/.exec(pattern);
  try {
    return literal ? new RegExp(literal[1] ?? "", literal[2]) : new RegExp(pattern);
  } catch {
    return null; // the caller reports the sample's pattern as broken
  }
}

/** `content` / `content.<path>`: inside the answer parsed as JSON; anything else: in the body. */
function fieldValue(field: string, answer: AnswerJson, body: unknown): unknown {
  if (field === "content") return answer.ok ? answer.value : undefined;
  if (field.startsWith(CONTENT_PREFIX)) {
    return answer.ok ? getPath(answer.value, field.slice(CONTENT_PREFIX.length)) : undefined;
  }
  return getPath(body, field);
}

export function scoreFields(ctx: ScoringContext): ComponentScore {
  const { expect, observation, content } = ctx;
  const reasons: string[] = [];
  const verdicts: ProbeCheck[] = [];
  let checks = 0;
  let met = 0;

  const required = expect.requiredFields ?? [];
  if (required.length > 0) {
    const needsAnswerJson = required.some((f) => f === "content" || f.startsWith(CONTENT_PREFIX));
    const answer: AnswerJson = needsAnswerJson ? parseAnswerJson(content) : { ok: false };
    const missing: string[] = [];
    for (const field of required) {
      checks += 1;
      if (isPresent(fieldValue(field, answer, observation.json))) met += 1;
      else missing.push(field);
    }
    if (needsAnswerJson && !answer.ok) reasons.push("answer is not JSON");
    if (missing.length > 0) reasons.push(`missing fields: ${missing.join(", ")}`);
    verdicts.push(missing.length > 0 ? failCheck("requiredFields", `missing ${missing.join(", ")}`) : passCheck("requiredFields"));
  }

  // Case-insensitive: "Status codes…" at the start of a sentence still says "status".
  const haystack = content.toLowerCase();
  const contains = expect.contains ?? [];
  const absent = contains.filter((text) => !haystack.includes(text.toLowerCase()));
  checks += contains.length;
  met += contains.length - absent.length;
  if (absent.length > 0) reasons.push(`does not contain ${absent.map((t) => quote(t)).join(", ")}`);
  if (contains.length > 0)
    verdicts.push(absent.length > 0 ? failCheck("contains", `lacks ${absent.map((t) => quote(t)).join(", ")}`) : passCheck("contains"));

  if (expect.matches !== undefined && expect.matches !== "") {
    const re = compilePattern(expect.matches);
    if (re === null) {
      // The sample is broken, not the line: no check, but say so.
      reasons.push(`the sample's matches pattern ${quote(expect.matches)} is not a valid regex (ignored)`);
      verdicts.push(brokenCheck("matches", `${quote(expect.matches)} is not a valid regex`));
    } else {
      checks += 1;
      if (re.test(content)) {
        met += 1;
        verdicts.push(passCheck("matches"));
      } else {
        reasons.push(`does not match ${quote(expect.matches)}`);
        verdicts.push(failCheck("matches", `does not match ${quote(expect.matches)}`));
      }
    }
  }

  return { score: checks === 0 ? 1 : clamp01(met / checks), reasons, checks: verdicts };
}
