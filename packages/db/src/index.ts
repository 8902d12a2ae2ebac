export * from "./client";
export * from "./data-dir";
export * from "./migrate";
export * from "./queries/index";
export * from "./schema/index";
