// Wire types of the control-plane API as the CLI names them: inferred from the zod schemas the API
// itself validates and documents with (@linewatch/contract; type-only: nothing of zod is loaded to
// print a table).
import type { RouteTable, RouteTableList } from "@linewatch/core";

export type {
  ErrorEnvelope,
  EventPage,
  LineCreate,
  LineHealth,
  LineList,
  LinePatch,
  LineResponse as Line,
  ProbeResultResponse as ProbeResult,
  ProbeRun,
  RouteCreateInput as RouteCreate,
  RouteList,
  RoutePatch,
  RouteResponse as Route,
  SampleCreate,
  SampleList,
  SamplePatch,
  SampleResponse as Sample,
  TokenCreated,
  TokenResponse as Token,
  WebhookCreate,
  WebhookList,
  WebhookResponse as Webhook,
  WebhookTestResult,
} from "@linewatch/contract";

/** The table wire type is declared once, in core (the API's TableSchema is checked against it). */
export type Table = RouteTable;
export type TableList = RouteTableList;
