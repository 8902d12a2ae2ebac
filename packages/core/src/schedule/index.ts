export * from "./probe-interval";
export * from "./jitter";
