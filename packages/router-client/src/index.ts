export type { OutcomeReportBody as OutcomeReport, OutcomeReportLineBody as OutcomeReportLine } from "@linewatch/contract";
export { emptyCounts, LIVE_OUTCOMES, type LiveOutcome } from "@linewatch/core";
export {
  type AnswerCheckOptions,
  type AnswerKind,
  type AnswerVerdict,
  AnthropicStreamCheck,
  checkJsonAnswer,
  outcomeOfStatus,
  ResponsesStreamCheck,
  requestedMaxTokens,
  type SseScan,
  StreamCheck,
  streamCheckFor,
} from "./answer-check";
export { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from "./backoff";
export {
  type ClientPickOptions,
  createRouterClient,
  type RouterClient,
  type RouterClientOptions,
  type RouteStatus,
  type TableSource,
} from "./client";
export { DEFAULT_EJECTOR, type FirstPick, LineEjector, type LineEjectorOptions, pickPastEjected } from "./line-ejector";
export { jsonLineLogger, type Logger, silentLogger } from "./logger";
export { type ParseResult, parseTable } from "./parse-table";
export { DEFAULT_RETRY_BUDGET, RetryBudget, type RetryBudgetOptions } from "./retry-budget";
export { buildSnapshot, type TableSnapshot } from "./snapshot";
export { type LoadedTables, loadTables, type SavedTable, saveTables } from "./table-file";
export type { Rng, RouteTable, TableLine, TableList, TableMode } from "./types";
export { TABLE_MODES } from "./types";
export {
  addressProblem,
  allowEntryProblem,
  type BaseLookup,
  compileAllowList,
  createGuardedLookup,
  embeddedIPv4,
  guardConnect,
  UpstreamAddressError,
  type UpstreamAllowList,
  upstreamUrlProblem,
} from "./url-guard";
export { createWeightedPicker, type PickOptions, type Weighted, type WeightedPicker } from "./weighted-picker";
