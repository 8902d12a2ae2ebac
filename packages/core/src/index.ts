export * from "./types";
export * from "./scoring/index";
export * from "./health/index";
export * from "./tables/index";
export * from "./schedule/index";
