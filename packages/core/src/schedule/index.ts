export * from "./jitter";
export * from "./probe-interval";
