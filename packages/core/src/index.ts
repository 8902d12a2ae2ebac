export * from "./health/index";
export * from "./random";
export * from "./replay/index";
export * from "./schedule/index";
export * from "./score-tone";
export * from "./scoring/index";
export * from "./tables/index";
export * from "./types";
