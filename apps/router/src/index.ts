export { createRouterApp, createRouterListener, type RouterAppDeps } from "./app";
export { ConfigError, loadConfig, type RouterConfig } from "./config";
export { createMetrics, type AttemptOutcome, type RequestOutcome, type RouterMetrics } from "./metrics";
export { AFFINITY_HEADER, LINE_HEADER, VERSION_HEADER, proxyRequest, type ProxyDeps, type ProxyRequest } from "./proxy";
export { nodeSink, webSink, type ResponseSink } from "./response-sink";
export { startRouter, type RunningRouter, type StartRouterOptions } from "./server";
