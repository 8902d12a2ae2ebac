import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgTable, primaryKey, real, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { routes } from "./routes";

export const lines = pgTable("lines", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull().unique(),
  tier: text("tier").notNull(),
  protocol: text("protocol").notNull(),
  baseUrl: text("base_url").notNull(),
  model: text("model").notNull(),
  /** AES-256-GCM ciphertext (see control-plane secrets); never the plain key. */
  apiKeyEnc: text("api_key_enc"),
  /**
   * Header names, each with whether it has a value (`true`/`false`); the values are secrets and
   * live sealed in `headers_enc`. A string here is a value stored before they were sealed: the
   * control plane seals it at start (sealLegacyHeaders).
   */
  headers: jsonb("headers").$type<Record<string, boolean | string>>().notNull().default(sql`'{}'::jsonb`),
  /** The header map (name → value) as one AES-256-GCM ciphertext, like apiKeyEnc; null: no headers. */
  headersEnc: text("headers_enc"),
  probeIntervalSec: integer("probe_interval_sec").notNull().default(45),
  timeoutMs: integer("timeout_ms"),
  dailyQuota: integer("daily_quota"),
  probeBudgetPct: real("probe_budget_pct").notNull().default(5),
  maxShare: real("max_share"),
  adminState: text("admin_state").notNull().default("active"),
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});

/** A line's membership of a route with its base weight. A route with members cannot be deleted without ?cascade=true. */
export const routeLines = pgTable(
  "route_lines",
  {
    routeName: text("route_name")
      .notNull()
      .references(() => routes.name, { onDelete: "restrict" }),
    lineId: uuid("line_id")
      .notNull()
      .references(() => lines.id, { onDelete: "cascade" }),
    weight: integer("weight").notNull(),
  },
  (t) => [primaryKey({ columns: [t.routeName, t.lineId] }), index("route_lines_line_idx").on(t.lineId)],
);
