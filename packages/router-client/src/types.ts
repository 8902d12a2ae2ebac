// Wire types of the control plane's router-facing API (SPEC §3, tables): declared once, in core
// (packages/core/src/tables/route-table.ts), which the control plane's schema is checked against too.
import type { RouteTable, RouteTableLine, RouteTableList } from "@linewatch/core";

export { TABLE_MODES, type TableMode } from "@linewatch/core";
export type { RouteTable };
/** A line of a route's table. */
export type TableLine = RouteTableLine;
/** `GET /v1/tables`. */
export type TableList = RouteTableList;

/** A random number in [0, 1). */
export type Rng = () => number;
