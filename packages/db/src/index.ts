export * from "./client";
export * from "./migrate";
export * from "./queries/index";
export * from "./schema/index";
