export * from "./anchor";
export * from "./judge";
export * from "./normalize";
export * from "./parse";
export * from "./sequential";
export * from "./track";
export * from "./variants";
