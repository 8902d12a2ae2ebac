export type { RouteTable, TableLine, TableList, TableMode, Rng } from "./types";
export { TABLE_MODES } from "./types";
export { parseTable, type ParseResult } from "./parse-table";
export { createWeightedPicker, type PickOptions, type Weighted, type WeightedPicker } from "./weighted-picker";
export { seededRng } from "./seeded-rng";
export { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from "./backoff";
export { loadTables, saveTables, type LoadedTables, type SavedTable } from "./table-file";
export {
  buildSnapshot,
  createRouterClient,
  jsonLineLogger,
  silentLogger,
  type Logger,
  type RouteStatus,
  type RouterClient,
  type RouterClientOptions,
  type TableSnapshot,
  type TableSource,
} from "./client";
