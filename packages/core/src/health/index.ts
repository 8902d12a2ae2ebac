export * from "./describe-health";
export * from "./health-types";
export * from "./line-policy";
export * from "./line-status";
export * from "./parse-health";
export * from "./policy";
export * from "./transition";
export * from "./weight-factor";
