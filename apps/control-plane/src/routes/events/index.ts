import { createRoute, z } from "@hono/zod-openapi";
import { findLineByName, listEvents } from "@linewatch/db";
import type { AppDeps } from "../../deps";
import { createRouter, errorResponses, isUuid, json } from "../common";

const EventSchema = z
  .object({
    id: z.number().int(),
    at: z.string(),
    kind: z.string().openapi({ description: "state_change | weight_change | table_published | trend_alert | live_evidence" }),
    lineId: z.string().nullable(),
    route: z.string().nullable(),
    reason: z.string(),
    data: z.record(z.string(), z.unknown()).openapi({ description: "from/to, the probe result ids behind it, …" }),
  })
  .openapi("Event");

const EventQuery = z.object({
  line: z.string().optional().openapi({ description: "Line id or name" }),
  route: z.string().optional(),
  kind: z.enum(["state_change", "weight_change", "table_published", "trend_alert", "live_evidence"]).optional(),
  since: z.iso.datetime({ offset: true }).optional().openapi({ description: "ISO time" }),
  before: z.coerce.number().int().min(1).optional().openapi({ description: "Page cursor: events older than this id" }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

const EventPageSchema = z
  .object({
    events: z.array(EventSchema),
    nextBefore: z.number().int().nullable().openapi({ description: "Pass as ?before= for the next (older) page" }),
  })
  .openapi("EventPage");

export function eventRoutes(deps: AppDeps) {
  const app = createRouter();
  const db = deps.database.db;

  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags: ["events"],
      summary: "The timeline, newest first: state and weight changes, table publishes, trend alerts",
      request: { query: EventQuery },
      responses: { 200: json(EventPageSchema, "A page of events"), ...errorResponses },
    }),
    async (c) => {
      const q = c.req.valid("query");
      let lineId: string | undefined;
      if (q.line) {
        lineId = isUuid(q.line) ? q.line : ((await findLineByName(db, q.line))?.id ?? "00000000-0000-0000-0000-000000000000");
      }
      const rows = await listEvents(db, {
        ...(lineId ? { lineId } : {}),
        ...(q.route ? { route: q.route } : {}),
        ...(q.kind ? { kind: q.kind } : {}),
        ...(q.since ? { since: new Date(q.since) } : {}),
        ...(q.before ? { before: q.before } : {}),
        limit: q.limit + 1,
      });
      const page = rows.slice(0, q.limit);
      return c.json(
        {
          events: page.map((e) => ({
            id: e.id,
            at: e.at.toISOString(),
            kind: e.kind,
            lineId: e.lineId,
            route: e.routeName,
            reason: e.reason,
            data: e.data,
          })),
          nextBefore: rows.length > q.limit ? (page.at(-1)?.id ?? null) : null,
        },
        200,
      );
    },
  );
  return app;
}
