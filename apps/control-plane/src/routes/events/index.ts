import { createRoute } from "@hono/zod-openapi";
import { EventPageSchema, EventQuery, isUuid } from "@linewatch/contract";
import { findLineByName, listEvents } from "@linewatch/db";
import type { AppDeps } from "../../deps";
import { createRouter, errorResponses, json } from "../common";

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
