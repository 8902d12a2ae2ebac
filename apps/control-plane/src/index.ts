// The control plane's public surface for other workspaces (CLI, router tests): its API schemas
// and response types — one schema, three uses — and the way to start it.

export { type ControlPlane, startControlPlane } from "./server";
