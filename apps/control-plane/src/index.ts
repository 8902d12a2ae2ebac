// The control plane's public surface for other workspaces (CLI, router tests): its API schemas
// and response types — one schema, three uses — and the way to start it.

export { LineHealthSchema, ProbeResultSchema } from "./routes/lines/health-schema";
export { type LineCreate, LineCreateSchema, type LinePatch, LinePatchSchema, type LineResponse, LineSchema } from "./routes/lines/schema";
export { RouteCreateSchema, RoutePatchSchema, RouteSchema } from "./routes/routes/schema";
export { type SampleCreate, SampleCreateSchema, type SamplePatch, SamplePatchSchema, SampleSchema } from "./routes/samples/schema";
export { TableSchema } from "./routes/tables/schema";
export { type ControlPlane, startControlPlane } from "./server";
