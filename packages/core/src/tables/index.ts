export * from "./apportion";
export * from "./compute-table";
export * from "./parse-published";
export * from "./publish-table";
export * from "./route-defaults";
export * from "./route-table";
export * from "./route-warnings";
export * from "./water-fill";
