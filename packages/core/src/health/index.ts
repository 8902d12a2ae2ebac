export * from "./describe-health";
export * from "./health-types";
export * from "./policy";
export * from "./transition";
export * from "./weight-factor";
