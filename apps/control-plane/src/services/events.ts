// The timeline as the API pages it, newest first.
import type { EVENT_KINDS, EventPage } from "@linewatch/contract";
import { isUuid } from "@linewatch/contract";
import { findLineByName, listEvents } from "@linewatch/db";
import type { AppDeps } from "../deps";

export interface EventPageQuery {
  /** A line's id or name. */
  line?: string | undefined;
  route?: string | undefined;
  kind?: (typeof EVENT_KINDS)[number] | undefined;
  since?: string | undefined;
  before?: number | undefined;
  limit: number;
}

/** A line name that names no line filters every event out (this id is never a line's). */
const NO_LINE = "00000000-0000-0000-0000-000000000000";

export class EventService {
  constructor(private readonly deps: AppDeps) {}

  async page(q: EventPageQuery): Promise<EventPage> {
    const db = this.deps.database.db;
    let lineId: string | undefined;
    if (q.line) lineId = isUuid(q.line) ? q.line : ((await findLineByName(db, q.line))?.id ?? NO_LINE);
    const rows = await listEvents(db, {
      ...(lineId ? { lineId } : {}),
      ...(q.route ? { route: q.route } : {}),
      ...(q.kind ? { kind: q.kind } : {}),
      ...(q.since ? { since: new Date(q.since) } : {}),
      ...(q.before ? { before: q.before } : {}),
      limit: q.limit + 1,
    });
    const page = rows.slice(0, q.limit);
    return {
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
    };
  }
}
