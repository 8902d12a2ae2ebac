export * from "./claim";
export * from "./parse";
export * from "./usage";
