export * from "./applicable-samples";
export * from "./jitter";
export * from "./probe-interval";
