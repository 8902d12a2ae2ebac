// A probe's checks (docs/scoring.md): each expectation of a sample is a check with its own verdict, so a
// human (and the health machine) sees exactly which one failed. A failed content check fails the
// probe whatever its score; a check the sample makes impossible to evaluate is `broken` and never
// counts against the line.

export const CHECK_NAMES = [
  "content",
  "minLength",
  "anchoredLength",
  "requiredFields",
  "contains",
  "matches",
  "answer",
  "nonce",
  "varies",
  /** A fingerprint sample's answers left the line's own or its paid peers' (fingerprint/judge.ts). */
  "fingerprint",
  /** The reported usage is more than the same prompt costs elsewhere (usage/usage.ts). */
  "usage",
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export const CHECK_VERDICTS = ["pass", "fail", "broken"] as const;
export type CheckVerdict = (typeof CHECK_VERDICTS)[number];

export interface ProbeCheck {
  name: CheckName;
  verdict: CheckVerdict;
  /** Why, in words, when it did not pass. */
  detail?: string;
}

export const passCheck = (name: CheckName): ProbeCheck => ({ name, verdict: "pass" });
export const failCheck = (name: CheckName, detail: string): ProbeCheck => ({ name, verdict: "fail", detail });
export const brokenCheck = (name: CheckName, detail: string): ProbeCheck => ({ name, verdict: "broken", detail });

/** The checks that failed, in the order they were made. */
export const failedCheckNames = (checks: readonly ProbeCheck[]): CheckName[] =>
  checks.filter((c) => c.verdict === "fail").map((c) => c.name);

/** A probe with a failed content check scores at most this: a wrong answer must weigh in the line score. */
export const FAILED_CHECK_SCORE = 40;
