export { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from "./backoff";
export {
  buildSnapshot,
  createRouterClient,
  jsonLineLogger,
  type Logger,
  type RouterClient,
  type RouterClientOptions,
  type RouteStatus,
  silentLogger,
  type TableSnapshot,
  type TableSource,
} from "./client";
export { type ParseResult, parseTable } from "./parse-table";
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
