// The control plane's public surface for other workspaces (CLI, router tests): its API schemas
// and response types — one schema, three uses — and the way to start it.
export { LineCreateSchema, LinePatchSchema, LineSchema, type LineCreate, type LinePatch, type LineResponse } from "./routes/lines/schema";
export { SampleCreateSchema, SamplePatchSchema, SampleSchema, type SampleCreate, type SamplePatch } from "./routes/samples/schema";
export { RouteCreateSchema, RoutePatchSchema, RouteSchema } from "./routes/routes/schema";
export { TableSchema, type Table } from "./routes/tables/schema";
export { LineHealthSchema, ProbeResultSchema } from "./routes/lines/health-schema";
export { startControlPlane, type ControlPlane } from "./server";
