// Wire types of the control plane's router-facing API (docs/api.md, tables), as @linewatch/contract's
// schemas say (type-only: a router loads nothing of zod). They equal core's RouteTable, the type the
// publisher computes (test/packages/router-client/table-wire.test.ts).
import type { TableLineResponse, TableListResponse, TableResponse } from "@linewatch/contract";

export { TABLE_MODES, type TableMode } from "@linewatch/core";
/** `GET /v1/tables/:route`. */
export type RouteTable = TableResponse;
/** A line of a route's table. */
export type TableLine = TableLineResponse;
/** `GET /v1/tables`. */
export type TableList = TableListResponse;

/** A random number in [0, 1). */
export type Rng = () => number;
