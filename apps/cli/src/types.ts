// Response types of the control-plane API, inferred from the zod schemas the API itself validates
// and documents with (type-only imports: nothing of the server is loaded to print a table).
import type { z } from "@hono/zod-openapi";
import type { RouteTable, RouteTableList } from "@linewatch/core";
import type { LineHealthSchema, ProbeResultSchema, ProbeRunSchema } from "../../control-plane/src/routes/lines/health-schema";
import type { LineCreate, LineListSchema, LinePatch, LineResponse } from "../../control-plane/src/routes/lines/schema";
import type { RouteCreateSchema, RouteListSchema, RoutePatchSchema, RouteSchema } from "../../control-plane/src/routes/routes/schema";
import type { SampleCreate, SampleListSchema, SamplePatch, SampleSchema } from "../../control-plane/src/routes/samples/schema";

export type Line = LineResponse;
export type LineList = z.infer<typeof LineListSchema>;
export type { LineCreate, LinePatch, SampleCreate, SamplePatch };
/** The table wire type is declared once, in core (the API's TableSchema is checked against it). */
export type Table = RouteTable;
export type Sample = z.infer<typeof SampleSchema>;
export type SampleList = z.infer<typeof SampleListSchema>;
export type Route = z.infer<typeof RouteSchema>;
export type RouteList = z.infer<typeof RouteListSchema>;
export type RouteCreate = z.input<typeof RouteCreateSchema>;
export type RoutePatch = z.infer<typeof RoutePatchSchema>;
export type TableList = RouteTableList;
export type LineHealth = z.infer<typeof LineHealthSchema>;
export type ProbeResult = z.infer<typeof ProbeResultSchema>;
export type ProbeRun = z.infer<typeof ProbeRunSchema>;

// The events and tokens routes keep their schemas inside their index.ts, unexported; these mirror
// them (GET /v1/events, /v1/tokens) until they move to a schema.ts of their own.
export interface Event {
  id: number;
  at: string;
  kind: string;
  lineId: string | null;
  route: string | null;
  reason: string;
  data: Record<string, unknown>;
}
export interface EventPage {
  events: Event[];
  nextBefore: number | null;
}
export interface Token {
  id: string;
  name: string;
  role: string;
  createdAt: string;
  revokedAt: string | null;
}
export interface TokenCreated extends Token {
  token: string;
}

/** The error envelope of SPEC §3. */
export interface ErrorEnvelope {
  error: { code: string; message: string; details?: { field?: string; message: string }[] };
}
