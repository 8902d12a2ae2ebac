// Wire types of the control plane's router-facing API (SPEC §3, tables). The router-client
// depends on nothing but Node, so it declares what it reads; the control plane serves exactly this.

export const TABLE_MODES = ["normal", "degraded", "panic"] as const;
export type TableMode = (typeof TABLE_MODES)[number];

export interface TableLine {
  id: string;
  name: string;
  tier: string;
  state: string;
  /** Integer; the weights of a table sum to 10000 (or the table has no lines). */
  weight: number;
  protocol: string;
  /** Ends in `/v1` for OpenAI-compatible lines. */
  baseUrl: string;
  model: string;
  /** Present only for a router-scoped token. */
  apiKey?: string | null;
  /** Present only for a router-scoped token. */
  headers?: Record<string, string>;
}

/** `GET /v1/tables/:route`. */
export interface RouteTable {
  route: string;
  version: number;
  generatedAt: string;
  mode: TableMode;
  lines: TableLine[];
}

/** `GET /v1/tables`. */
export interface TableList {
  tables: RouteTable[];
}

/** A random number in [0, 1). */
export type Rng = () => number;
