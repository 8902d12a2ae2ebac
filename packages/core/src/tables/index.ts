export * from "./apportion";
export * from "./compute-table";
export * from "./publish-table";
export * from "./route-warnings";
export * from "./water-fill";
