export { createRouterApp, createRouterListener, type RouterAppDeps } from "./app";
export { ConfigError, loadConfig, type RouterConfig } from "./config";
export { type AttemptOutcome, createMetrics, type RequestOutcome, type RouterMetrics } from "./metrics";
export { OutcomeReporter, type OutcomeReporterOptions, type RoleCheck } from "./outcome-reporter";
export { AFFINITY_HEADER, LINE_HEADER, type ProxyDeps, type ProxyRequest, proxyRequest, RETRY_HEADER, VERSION_HEADER } from "./proxy";
export { nodeSink, type ResponseSink, webSink } from "./response-sink";
export { RouterTokenError, type RunningRouter, type StartRouterOptions, startRouter } from "./server";
