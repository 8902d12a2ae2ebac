export * from "./policy";
export * from "./health-types";
export * from "./weight-factor";
export * from "./transition";
export * from "./describe-health";
