export { run, COMMANDS, VERSION } from "./run";
export type { Io } from "./context";
export { EXIT, CliError } from "./errors";
export { ApiClient, DEFAULT_URL } from "./client";
export { planChanges, describeChange, type Change } from "./plan";
