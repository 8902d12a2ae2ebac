// The control plane's wire contract: one zod schema per request and response (validation, handler
// types and /openapi.json), and the types inferred from them. The control plane, the CLI and
// router-client import this by name (STYLE 5, 15).
export * from "./common";
export * from "./events";
export * from "./health";
export * from "./lines";
export * from "./outcomes";
export * from "./replay";
export * from "./routes";
export * from "./samples";
export * from "./system";
export * from "./tables";
export * from "./tokens";
export * from "./webhooks";
