// The control plane's public surface for other workspaces (the CLI's `linewatch serve`, tests, benches):
// its configuration and the way to start it. Its wire types are @linewatch/contract's.

export { type Config, loadConfig } from "./config";
export { type ControlPlane, serveControlPlane } from "./server";
export { type RunningControlPlane, type StartOptions, startControlPlane, untilStopSignal } from "./start";
