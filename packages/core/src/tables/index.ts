export * from "./water-fill";
export * from "./apportion";
export * from "./compute-table";
export * from "./publish-table";
export * from "./route-warnings";
