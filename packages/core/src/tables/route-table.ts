// The wire type of a published table (docs/api.md): what `GET /v1/tables/:route` answers and what routers
// read. Declared once here; the API's zod schema and the router-client's parser are checked against it
// (test/packages/router-client/table-wire.test.ts).
import type { TableMode } from "./compute-table";

/** A line as a published table lists it. */
export interface RouteTableLine {
  id: string;
  name: string;
  tier: string;
  state: string;
  /** Integer; the weights of each protocol's lines sum to 10000 (or the table has no lines): docs/tables.md#protocols. */
  weight: number;
  protocol: string;
  /** Ends in `/v1` for OpenAI-compatible lines. */
  baseUrl: string;
  model: string;
  /** Present only for a router-scoped token. */
  apiKey?: string | null | undefined;
  /** Present only for a router-scoped token. */
  headers?: Record<string, string> | undefined;
}

/** `GET /v1/tables/:route`. */
export interface RouteTable {
  route: string;
  version: number;
  /** ISO 8601: when this version was first published. */
  generatedAt: string;
  mode: TableMode;
  lines: RouteTableLine[];
}

/** `GET /v1/tables`. */
export interface RouteTableList {
  tables: RouteTable[];
}
