export * from "./health/index";
export * from "./live/index";
export * from "./random";
export * from "./schedule/index";
export * from "./scoring/index";
export * from "./tables/index";
export * from "./types";
