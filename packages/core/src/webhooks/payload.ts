// What a webhook sink is sent for an event (docs/alerts.md#payload): the generic JSON body, or a
// Slack-compatible one. Built once per (event, sink) when the event is fanned out, so every attempt
// sends the same bytes.
import { healthReasonCode, type TimelineEvent, tableModeChange, type WebhookEventKind } from "./event-kinds";

export const WEBHOOK_FORMATS = ["json", "slack"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** An event on its way to one sink. */
export interface WebhookMessage {
  /** The idempotency key: the same on every attempt of this event to this sink, different for every other pair. */
  deliveryId: string;
  kinds: WebhookEventKind[];
  event: TimelineEvent;
  /** The line's name (null: a route's event, or a line deleted since). */
  line: string | null;
  /** The routes it concerns: the route's, or the line's when it was fanned out. */
  routes: string[];
}

/** The generic JSON body, as a receiver parses it. */
export interface WebhookJsonBody {
  id: string;
  kinds: WebhookEventKind[];
  summary: string;
  line: string | null;
  routes: string[];
  event: {
    id: number;
    at: string;
    kind: string;
    lineId: string | null;
    route: string | null;
    reason: string;
    data: Record<string, unknown>;
  };
}

/** The idempotency key of an event's delivery to a sink. */
export const webhookDeliveryId = (eventId: number, webhookId: string) => `${eventId}-${webhookId}`;

const str = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : "?");

/** One line saying what happened, for people (Slack's text, the JSON body's summary). */
export function describeWebhookEvent(m: Pick<WebhookMessage, "event" | "line">): string {
  const e = m.event;
  const line = `line ${m.line ?? e.lineId ?? "?"}`;
  switch (e.kind) {
    case "state_change":
      return `${line}: ${str(e.data.from)} → ${str(e.data.to)} (${e.reason})`;
    case "trend_alert":
      return `${line}: trend alert, score ${str(e.data.from)} → ${str(e.data.to)} (${e.reason})`;
    case "live_evidence":
      return `${line}: live traffic suspect (${e.reason})`;
    case "table_published": {
      const change = tableModeChange(e);
      const mode = change ? `${change.from} → ${change.to}` : str(e.data.mode);
      return `route ${e.route ?? "?"}: table mode ${mode}, version ${str(e.data.version)} (${e.reason})`;
    }
    default:
      return `${e.kind}${e.lineId ? ` of ${line}` : e.route ? ` of route ${e.route}` : ""}: ${e.reason}`;
  }
}

/** Slack's emoji for how bad it is. */
function mark(e: TimelineEvent): string {
  if (e.kind === "state_change") {
    if (healthReasonCode(e) === "fail_safe" || e.data.to === "cooldown") return ":red_circle:";
    return e.data.to === "healthy" ? ":large_green_circle:" : ":large_yellow_circle:";
  }
  if (e.kind === "table_published") {
    const to = tableModeChange(e)?.to;
    return to === "panic" ? ":red_circle:" : to === "degraded" ? ":large_yellow_circle:" : ":large_green_circle:";
  }
  return e.kind === "trend_alert" ? ":chart_with_downwards_trend:" : ":warning:";
}

export function webhookJsonBody(m: WebhookMessage): WebhookJsonBody {
  const e = m.event;
  return {
    id: m.deliveryId,
    kinds: m.kinds,
    summary: describeWebhookEvent(m),
    line: m.line,
    routes: m.routes,
    event: { id: e.id, at: new Date(e.at).toISOString(), kind: e.kind, lineId: e.lineId, route: e.route, reason: e.reason, data: e.data },
  };
}

/** The body a sink of this format is sent, as the exact text signed and sent on every attempt. */
export function webhookBody(format: WebhookFormat, m: WebhookMessage): string {
  if (format === "slack") {
    // Slack's incoming webhooks read `text` (mrkdwn); backticks keep names literal.
    const text = `${mark(m.event)} *linewatch* ${describeWebhookEvent(m).replace(/^(line|route) ([^\s:]+)/, "$1 `$2`")}`;
    return JSON.stringify({ text });
  }
  return JSON.stringify(webhookJsonBody(m));
}
