export * from "./bad-episodes";
export * from "./partition";
export * from "./policy-replay";
export * from "./probe-event";
export * from "./recorded";
export * from "./replay-policy";
export * from "./report";
export * from "./timeline";
