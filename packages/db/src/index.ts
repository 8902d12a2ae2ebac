export * from "./client";
export * from "./migrate";
export * from "./schema/index";
export * from "./queries/index";
