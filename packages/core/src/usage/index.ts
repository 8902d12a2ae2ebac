export * from "./parse";
export * from "./usage";
