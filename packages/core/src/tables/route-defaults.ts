// A route's settings when it is created without them (docs/tables.md): the API, the registry file, the
// database's column defaults and the publisher read them here.
import { DEFAULT_HEALTH_POLICY } from "../health/policy";
import type { OnAllDown } from "../types";

export const DEFAULT_ROUTE_SETTINGS: Readonly<{ freeShareCap: number; onAllDown: OnAllDown }> = Object.freeze({
  /** Free lines carry at most this share of the route's traffic together. */
  freeShareCap: DEFAULT_HEALTH_POLICY.freeShareCap,
  /** With no line usable, the table falls back to every active line (panic) rather than to none. */
  onAllDown: "fail-open",
});
