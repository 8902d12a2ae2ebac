export * from "./errors";
export * from "./lines";
export * from "./routes";
export * from "./samples";
export * from "./tokens";
