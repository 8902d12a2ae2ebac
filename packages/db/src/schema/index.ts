export * from "./lines";
export * from "./routes";
export * from "./samples";
export * from "./probe-results";
export * from "./line-health";
export * from "./tables";
export * from "./events";
export * from "./tokens";
