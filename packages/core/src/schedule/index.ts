export * from "./applicable-samples";
export * from "./interleave";
export * from "./jitter";
export * from "./probe-interval";
export * from "./slots";
