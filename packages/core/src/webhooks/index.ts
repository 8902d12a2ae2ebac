export * from "./event-kinds";
export * from "./payload";
export * from "./retry";
