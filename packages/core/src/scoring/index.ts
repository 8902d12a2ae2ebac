// Scoring core (docs/scoring.md) and the protocol adapters it reads answers with. Pure: no I/O, no clock.

export * from "../protocols/index";
export {
  BASELINE_WARMUP,
  BASELINE_WINDOW,
  type Baseline,
  type BaselineEntry,
  baselineWeight,
  computeBaseline,
  EMPTY_BASELINE,
  RECENT_HASHES,
  STALE_RUN,
} from "./baseline";
export * from "./checks";
export { compilePattern, scoreFields } from "./fields";
export {
  ANSWER_BURIED_SCORE,
  type AnswerVerdict,
  judgeAnswer,
  SHORT_ANSWER_TOKENS,
  scoreFreshness,
} from "./freshness";
export { getPath, parsePath } from "./json-path";
export {
  LATENCY_SLACK_MS,
  P90_TOLERANCE,
  SUSPICIOUS_LATENCY_RATIO,
  SUSPICIOUS_LATENCY_SCORE,
  SUSPICIOUS_LENGTH_RATIO,
  scoreLatency,
} from "./latency";
export { ANCHORED_LENGTH_SHARE, LENGTH_SLACK_CHARS, relativeLengthScore, scoreLength } from "./length";
export {
  averageComponents,
  LINE_SCORE_WINDOW_MS,
  lineScore,
  type SampleScoreSum,
  type ScoredResult,
  sampleWeight,
  summedLineScore,
} from "./line-score";
export {
  type ComponentScore,
  PEER_LENGTH_SHARE,
  type ProbeObservation,
  type ScoredProbe,
  type ScoreProbeInput,
  type ScoringContext,
  scoreProbe,
} from "./score-probe";
export { hardFailureReason, isHardFailure, scoreStatus } from "./status";
export { fillTemplate, NONCE_LENGTH, probeNonce, type TemplateVars } from "./template";
export { answerTokens, charLength, normalizeAnswer, parseAnswerJson } from "./text";
export {
  COMPONENT_NAMES,
  DEFAULT_WEIGHTS,
  PASS_SCORE,
  type ScoreWeights,
  scoreFromComponents,
} from "./weights";
