export { ApiClient, DEFAULT_URL } from "./client";
export type { Io } from "./context";
export { CliError, EXIT } from "./errors";
export { type Change, describeChange, planChanges } from "./plan";
export { COMMANDS, run, VERSION } from "./run";
