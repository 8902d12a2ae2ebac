export * from "./outcomes";
export * from "./summary";
export * from "./verdict";
