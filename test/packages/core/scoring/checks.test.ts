// A probe's checks (docs/scoring.md), as a table: (sample expectation, observation, anchored length) →
// each check's verdict and whether the probe passes. Then issue 11's two findings.
import {
  type Baseline,
  CHECK_NAMES,
  type CheckName,
  type CheckVerdict,
  FAILED_CHECK_SCORE,
  type FingerprintTrack,
  failedCheckNames,
  PASS_SCORE,
  type ProbeObservation,
  type SampleExpect,
  type ScoredProbe,
  scoreFromComponents,
  scoreProbe,
  type UsageTrack,
  variantKey,
} from "@linewatch/core";
import { describe, expect, it } from "vitest";
import { cold, NONCE, observe } from "./fixtures";

interface Row {
  name: string;
  expect: SampleExpect;
  observation: ProbeObservation;
  anchoredLength?: number | null;
  peerLength?: number | null;
  baseline?: Baseline;
  /** A fingerprint sample's track (and request, when not FP_REQUEST). */
  fingerprint?: { track: FingerprintTrack; request?: Record<string, unknown> };
  /** The usage claimed, held to USAGE_40. */
  usage?: { input: number; output: number };
  checks: [CheckName, CheckVerdict][];
  passed: boolean;
}

const x = (n: number) => "x".repeat(n);
const LYON_FIELDS = ["content.city", "content.country", "content.population", "content.landmarks"];
const LYON = { city: "Lyon", country: "France", population: 522250, landmarks: ["Fourvière", "Vieux Lyon", "Place Bellecour"] };
const LONG_155 = "The fast train from Paris to Lyon takes about 155 minutes on most days.";
const NONCE_ANSWER = `${NONCE}\nTokens are echoed so a monitor can tell a freshly generated answer from a cached one.`;
/** A warm line that usually answers in about 1.2 s, p90 1.65 s (issue 11, finding 1). */
const P90_1650: Baseline = { lengthMedian: null, latencyP50: 1200, latencyP90: 1650, samples: 20, recentHashes: [] };

/** A fingerprint sample's request, and a line whose anchored answer to it is "7" (200 answers). */
const FP_PROMPT = "Pick a random number between 1 and 10. Answer with the number only.";
const FP_REQUEST = { messages: [{ role: "user", content: FP_PROMPT }], max_tokens: 8, temperature: 0 };
const sevens = (own: number): FingerprintTrack => ({
  own,
  peers: 0,
  threshold: 17,
  variants: { [variantKey(FP_PROMPT)]: { anchor: { shares: { "7": 1 }, n: 200 }, recent: [] } },
});
/** A line whose anchored prompt tokens for the sample are 40, and 0.25 completion tokens per character. */
const USAGE_40: UsageTrack = { prompt: { "": { anchor: 40, n: 21, recent: [40, 41, 39] } }, ratio: { anchor: 0.25, n: 21, recent: [] } };

const ROWS: Row[] = [
  // content: an empty answer (or none) fails, and is the only length check made.
  { name: "content: empty answer", expect: {}, observation: observe(""), checks: [["content", "fail"]], passed: false },
  {
    name: "content: empty, minLength not checked too",
    expect: { minLength: 10 },
    observation: observe(""),
    checks: [["content", "fail"]],
    passed: false,
  },
  { name: "content: 2xx without an answer", expect: {}, observation: observe(null), checks: [["content", "fail"]], passed: false },
  { name: "nothing expected: no check", expect: {}, observation: observe("ok"), checks: [], passed: true },

  // minLength
  { name: "minLength: exactly", expect: { minLength: 10 }, observation: observe(x(10)), checks: [["minLength", "pass"]], passed: true },
  {
    name: "minLength: one char short",
    expect: { minLength: 10 },
    observation: observe(x(9)),
    checks: [["minLength", "fail"]],
    passed: false,
  },

  // maxLength lowers the length component but is not a check.
  { name: "maxLength: 4× over, no check", expect: { maxLength: 10 }, observation: observe(x(40)), checks: [], passed: true },

  // anchoredLength: under half of the line's anchor, held to at least PEER_LENGTH_SHARE of its peers'.
  {
    name: "anchoredLength: exactly half (with the 20-char slack on both sides: 40 of 100)",
    expect: {},
    observation: observe(x(40)),
    anchoredLength: 100,
    checks: [["anchoredLength", "pass"]],
    passed: true,
  },
  {
    name: "anchoredLength: under half",
    expect: {},
    observation: observe(x(39)),
    anchoredLength: 100,
    checks: [["anchoredLength", "fail"]],
    passed: false,
  },
  {
    name: "anchoredLength: no anchor yet, peers' 100 → 60, half of it passes",
    expect: {},
    observation: observe(x(20)),
    peerLength: 100,
    checks: [["anchoredLength", "pass"]],
    passed: true,
  },
  {
    name: "anchoredLength: no anchor yet, peers' 100 → 60, under half fails",
    expect: {},
    observation: observe(x(19)),
    peerLength: 100,
    checks: [["anchoredLength", "fail"]],
    passed: false,
  },
  {
    name: "anchoredLength: an anchor learned short is held to 60% of the peers'",
    expect: {},
    observation: observe(x(19)),
    anchoredLength: 40,
    peerLength: 100,
    checks: [["anchoredLength", "fail"]],
    passed: false,
  },
  {
    name: "anchoredLength: a longer own anchor wins over short peers",
    expect: {},
    observation: observe(x(39)),
    anchoredLength: 100,
    peerLength: 10,
    checks: [["anchoredLength", "fail"]],
    passed: false,
  },
  {
    name: "anchoredLength: none while cold",
    expect: {},
    observation: observe(x(1)),
    anchoredLength: null,
    peerLength: null,
    checks: [],
    passed: true,
  },
  { name: "anchoredLength: a zero anchor is none", expect: {}, observation: observe(x(1)), anchoredLength: 0, checks: [], passed: true },
  {
    name: 'anchoredLength: a short right answer is not cut ("155" against a usual 11 chars)',
    expect: { answer: "155" },
    observation: observe("155"),
    anchoredLength: 11,
    checks: [
      ["anchoredLength", "pass"],
      ["answer", "pass"],
    ],
    passed: true,
  },
  {
    name: "minLength met, anchoredLength not: truncation above minLength",
    expect: { minLength: 10 },
    observation: observe(x(39)),
    anchoredLength: 100,
    checks: [
      ["minLength", "pass"],
      ["anchoredLength", "fail"],
    ],
    passed: false,
  },

  // requiredFields: any one missing fails.
  {
    name: "requiredFields: all present",
    expect: { requiredFields: [...LYON_FIELDS, "usage.total_tokens"] },
    observation: observe(JSON.stringify(LYON)),
    checks: [["requiredFields", "pass"]],
    passed: true,
  },
  {
    name: "requiredFields: 2 of 4 missing from a JSON answer",
    expect: { requiredFields: LYON_FIELDS },
    observation: observe(JSON.stringify({ city: "Lyon", country: "France" })),
    checks: [["requiredFields", "fail"]],
    passed: false,
  },
  {
    name: "requiredFields: a body field missing",
    expect: { requiredFields: ["usage.total_tokens"] },
    observation: observe("ok", { json: { id: "x" } }),
    checks: [["requiredFields", "fail"]],
    passed: false,
  },
  {
    name: "requiredFields: the answer is not JSON",
    expect: { requiredFields: ["content.city"] },
    observation: observe("Lyon, France"),
    checks: [["requiredFields", "fail"]],
    passed: false,
  },

  // contains: every string, case-insensitive.
  {
    name: "contains: all, any case",
    expect: { contains: ["Status", "code"] },
    observation: observe("status codes"),
    checks: [["contains", "pass"]],
    passed: true,
  },
  {
    name: "contains: one of two absent",
    expect: { contains: ["status", "content"] },
    observation: observe("status codes"),
    checks: [["contains", "fail"]],
    passed: false,
  },

  // matches: a bad regex is the sample's fault, never the line's.
  { name: "matches: a hit", expect: { matches: "^\\d+$" }, observation: observe("155"), checks: [["matches", "pass"]], passed: true },
  {
    name: "matches: /pattern/flags",
    expect: { matches: "/^lyon$/i" },
    observation: observe("LYON"),
    checks: [["matches", "pass"]],
    passed: true,
  },
  { name: "matches: a miss", expect: { matches: "^\\d+$" }, observation: observe("155 min"), checks: [["matches", "fail"]], passed: false },
  {
    name: "matches: a bad regex is broken",
    expect: { matches: "([unclosed" },
    observation: observe("x"),
    checks: [["matches", "broken"]],
    passed: true,
  },

  // answer: wrong fails; a JSON object/array answer cannot be compared: broken.
  { name: "answer: exact", expect: { answer: "155" }, observation: observe("155"), checks: [["answer", "pass"]], passed: true },
  {
    name: "answer: in a short sentence",
    expect: { answer: "155" },
    observation: observe("The journey takes 155 minutes."),
    checks: [["answer", "pass"]],
    passed: true,
  },
  {
    name: "answer: buried in a long answer",
    expect: { answer: "155" },
    observation: observe(LONG_155),
    checks: [["answer", "pass"]],
    passed: true,
  },
  { name: "answer: wrong", expect: { answer: "155" }, observation: observe("145"), checks: [["answer", "fail"]], passed: false },
  {
    name: "answer: a JSON object answer is broken",
    expect: { answer: "155" },
    observation: observe('{"minutes": 155}'),
    checks: [["answer", "broken"]],
    passed: true,
  },
  {
    name: "answer: a wrong JSON object answer is broken too, not counted",
    expect: { answer: "155" },
    observation: observe('{"minutes": 145}'),
    checks: [["answer", "broken"]],
    passed: true,
  },
  {
    name: "answer: a JSON array answer is broken",
    expect: { answer: "155" },
    observation: observe("[155]"),
    checks: [["answer", "broken"]],
    passed: true,
  },
  {
    name: "answer: a fenced JSON answer is broken",
    expect: { answer: "155" },
    observation: observe('```json\n{"minutes": 145}\n```'),
    checks: [["answer", "broken"]],
    passed: true,
  },
  {
    name: "answer: text that merely starts with a bracket is text, and wrong",
    expect: { answer: "155" },
    observation: observe("[1] 145 minutes"),
    checks: [["answer", "fail"]],
    passed: false,
  },

  // nonce: echoed in any case; no nonce in the request, no check.
  {
    name: "nonce: echoed",
    expect: { nonce: true },
    observation: observe(`${NONCE.toUpperCase()} ok`),
    checks: [["nonce", "pass"]],
    passed: true,
  },
  {
    name: "nonce: not echoed",
    expect: { nonce: true },
    observation: observe("a cached answer"),
    checks: [["nonce", "fail"]],
    passed: false,
  },
  { name: "nonce: none filled in, no check", expect: { nonce: true }, observation: observe("x", { nonce: "" }), checks: [], passed: true },

  // varies: the same hash STALE_RUN (3) probes in a row.
  {
    name: "varies: the same hash 3 in a row",
    expect: { varies: true },
    observation: observe("same"),
    baseline: { ...cold, samples: 2, recentHashes: ["hash:same", "hash:same"] },
    checks: [["varies", "fail"]],
    passed: false,
  },
  {
    name: "varies: a different hash before",
    expect: { varies: true },
    observation: observe("same"),
    baseline: { ...cold, samples: 2, recentHashes: ["hash:same", "hash:other"] },
    checks: [["varies", "pass"]],
    passed: true,
  },
  {
    name: "varies: no hash, no check",
    expect: { varies: true },
    observation: observe("x", { contentHash: null }),
    checks: [],
    passed: true,
  },

  // fingerprint: an answer outside the anchor fails only when the statistic reaches its threshold.
  {
    name: "fingerprint: the anchored answer",
    expect: { fingerprint: { form: "number" } },
    observation: observe("7"),
    fingerprint: { track: sevens(0) },
    checks: [["fingerprint", "pass"]],
    passed: true,
  },
  {
    name: "fingerprint: one other answer is nondeterminism, not a failure",
    expect: { fingerprint: { form: "number" } },
    observation: observe("I'd pick 3."),
    fingerprint: { track: sevens(0) },
    checks: [["fingerprint", "pass"]],
    passed: true,
  },
  {
    name: "fingerprint: another answer takes the evidence over its threshold",
    expect: { fingerprint: { form: "number" } },
    observation: observe("3"),
    fingerprint: { track: sevens(16) },
    checks: [["fingerprint", "fail"]],
    passed: false,
  },
  {
    name: "fingerprint: a sample at temperature 0.7 is broken",
    expect: { fingerprint: { form: "number" } },
    observation: observe("3"),
    fingerprint: { track: sevens(16), request: { ...FP_REQUEST, temperature: 0.7 } },
    checks: [["fingerprint", "broken"]],
    passed: true,
  },

  // usage: prompt tokens against the line's anchor, completion tokens against the answer's length.
  {
    name: "usage: 2 tokens over the anchor is honest",
    expect: {},
    observation: observe("x".repeat(40)),
    usage: { input: 42, output: 11 },
    checks: [["usage", "pass"]],
    passed: true,
  },
  {
    name: "usage: ×1.2 prompt tokens fail",
    expect: {},
    observation: observe("x".repeat(40)),
    usage: { input: 48, output: 10 },
    checks: [["usage", "fail"]],
    passed: false,
  },

  // Latency is not a check: it lowers the score only.
  {
    name: "latency: twice maxLatencyMs",
    expect: { maxLatencyMs: 6000 },
    observation: observe("ok", { latencyMs: 12_000 }),
    checks: [],
    passed: true,
  },
  {
    name: "latency: 4.45 s against maxLatencyMs 6000 and a p90 of 1.65 s (issue 11)",
    expect: { nonce: true, varies: true, minLength: 30, maxLatencyMs: 6000 },
    observation: observe(NONCE_ANSWER, { latencyMs: 4450 }),
    baseline: P90_1650,
    checks: [
      ["minLength", "pass"],
      ["nonce", "pass"],
      ["varies", "pass"],
    ],
    passed: true,
  },

  // Several checks: in the order they are made (length, fields, freshness).
  {
    name: "every check passing, in order",
    expect: {
      answer: "155",
      varies: true,
      nonce: true,
      matches: "\\d",
      contains: ["train"],
      requiredFields: ["usage.total_tokens"],
      minLength: 10,
    },
    observation: observe(`${NONCE} 155 by train`),
    anchoredLength: 20,
    checks: [
      ["minLength", "pass"],
      ["anchoredLength", "pass"],
      ["requiredFields", "pass"],
      ["contains", "pass"],
      ["matches", "pass"],
      ["nonce", "pass"],
      ["varies", "pass"],
      ["answer", "pass"],
    ],
    passed: true,
  },
  {
    name: "a hard failure: no checks",
    expect: { answer: "155", nonce: true },
    observation: observe(null, { status: 503, errorClass: "http_status" }),
    checks: [],
    passed: false,
  },
];

function run(row: Row): ScoredProbe {
  return scoreProbe({
    expect: row.expect,
    observation: row.observation,
    baseline: row.baseline ?? cold,
    anchoredLength: row.anchoredLength,
    peerLength: row.peerLength,
    ...(row.fingerprint
      ? {
          fingerprint: {
            request: row.fingerprint.request ?? FP_REQUEST,
            variant: variantKey(FP_PROMPT),
            tier: "paid" as const,
            track: row.fingerprint.track,
            peers: [],
            threshold: 17,
          },
        }
      : {}),
    ...(row.usage ? { usage: { claimed: row.usage, variant: "", tier: "paid" as const, track: USAGE_40, peers: [] } } : {}),
  });
}

describe("checks, by table", () => {
  it.each(ROWS)("$name", (row) => {
    const r = run(row);
    expect(r.checks.map((c): [CheckName, CheckVerdict] => [c.name, c.verdict])).toEqual(row.checks);
    expect(r.passed).toBe(row.passed);
    for (const c of r.checks) {
      if (c.verdict === "pass") expect(c.detail).toBeUndefined();
      else expect(c.detail).toMatch(/\S/);
    }
    const failed = failedCheckNames(r.checks);
    if (failed.length > 0) {
      expect(r.score).toBeLessThanOrEqual(FAILED_CHECK_SCORE);
      expect(r.reasons[0]).toBe(`failed check: ${failed.join(", ")}`);
    } else if (!r.hardFailure) {
      // No failed check: the score is the components' and decides alone.
      expect(r.score).toBe(scoreFromComponents(r.components));
      expect(r.passed).toBe(r.score >= PASS_SCORE);
    }
  });

  it("covers every check name failing and passing, and both broken checks", () => {
    const seen = new Set(ROWS.flatMap((row) => row.checks.map(([name, verdict]) => `${name}:${verdict}`)));
    for (const name of CHECK_NAMES) {
      expect(seen, name).toContain(`${name}:fail`);
      // An answer that is there is not a check of its own: `content` only ever fails.
      if (name !== "content") expect(seen, name).toContain(`${name}:pass`);
    }
    expect(seen).toContain("matches:broken");
    expect(seen).toContain("answer:broken");
  });
});

describe("issue 11's findings", () => {
  it("an answer at 4.45 s against maxLatencyMs 6000 with a p90 of 1.65 s passes (it scored 92 and failed)", () => {
    const r = scoreProbe({
      expect: { nonce: true, varies: true, minLength: 30, maxLatencyMs: 6000 },
      observation: observe(NONCE_ANSWER, { latencyMs: 4450 }),
      baseline: P90_1650,
    });
    // Past 1.5 × p90: (4450 + 500) / (1650 + 500) = 2.30, so latency 1 − 0.80 / 1.5 = 0.465.
    expect(r.components).toEqual({ length: 1, fields: 1, freshness: 1, status: 1, latency: 0.465 });
    expect(r.score).toBe(92);
    expect(failedCheckNames(r.checks)).toEqual([]);
    expect(r.passed).toBe(true);
    expect(r.reasons).toEqual(["took 4450 ms, much slower than this line's p90 1650 ms"]);
  });

  it("a JSON answer missing 2 of its 4 requiredFields fails (it passed with the share met, 0.5)", () => {
    const r = scoreProbe({
      expect: { requiredFields: LYON_FIELDS },
      observation: observe(JSON.stringify({ city: "Lyon", country: "France" })),
      baseline: cold,
    });
    expect(r.components.fields).toBe(0.5);
    expect(scoreFromComponents(r.components)).toBeGreaterThanOrEqual(PASS_SCORE);
    expect(r.checks).toEqual([{ name: "requiredFields", verdict: "fail", detail: "missing content.population, content.landmarks" }]);
    expect(r.score).toBe(FAILED_CHECK_SCORE);
    expect(r.passed).toBe(false);
    expect(r.reasons[0]).toBe("failed check: requiredFields");
  });
});
