// Which events of the timeline a webhook sink may ask for (docs/alerts.md#webhooks). The one list to
// extend when the timeline gains a kind worth pushing: a kind here, its matcher below, and sinks can
// subscribe to it (the API's schema reads WEBHOOK_EVENT_KINDS).
import { TABLE_MODES, type TableMode } from "../tables/compute-table";

/** An event of the timeline, as the webhook fan-out reads it. */
export interface TimelineEvent {
  id: number;
  /** ms since epoch */
  at: number;
  kind: string;
  lineId: string | null;
  route: string | null;
  reason: string;
  data: Record<string, unknown>;
}

export const WEBHOOK_EVENT_KINDS = [
  "state_change",
  "fail_safe",
  "trend_alert",
  "live_evidence",
  "table_mode",
  "fingerprint",
  "usage",
  "shape_change",
] as const;
export type WebhookEventKind = (typeof WEBHOOK_EVENT_KINDS)[number];

interface WebhookKindRule {
  /** What a sink subscribed to this kind is sent (docs). */
  carries: string;
  matches(event: TimelineEvent): boolean;
  /** A narrower view of another kind's events: named first when an event is both. */
  narrows?: WebhookEventKind;
}

/** The reason code of a health event: its stored reason is `<code>: <detail>` (health/event-rows.ts). */
export function healthReasonCode(event: Pick<TimelineEvent, "reason">): string {
  const i = event.reason.indexOf(":");
  return i === -1 ? event.reason : event.reason.slice(0, i);
}

const isMode = (v: unknown): v is TableMode => typeof v === "string" && (TABLE_MODES as readonly string[]).includes(v);

/**
 * A table_published event that moved the route's mode into or out of degraded/panic. A route's first
 * version is no change (a new route without lines starts in panic), nor is an event that does not
 * say its previous mode (recorded before it did).
 */
export function tableModeChange(event: TimelineEvent): { from: TableMode; to: TableMode } | null {
  if (event.kind !== "table_published") return null;
  const { mode, previousMode } = event.data;
  if (!isMode(mode) || !isMode(previousMode) || mode === previousMode) return null;
  return { from: previousMode, to: mode };
}

export const WEBHOOK_KIND_RULES: Record<WebhookEventKind, WebhookKindRule> = {
  state_change: {
    carries: "every state_change of a line (healthy, degraded, cooldown, probation, …)",
    matches: (e) => e.kind === "state_change",
  },
  fail_safe: {
    carries: "state_change events whose reason is fail_safe (the health machine could not apply a failing result)",
    matches: (e) => e.kind === "state_change" && healthReasonCode(e) === "fail_safe",
    narrows: "state_change",
  },
  trend_alert: { carries: "trend_alert events (a line score fell sharply)", matches: (e) => e.kind === "trend_alert" },
  live_evidence: { carries: "live_evidence events (live traffic made a line suspect)", matches: (e) => e.kind === "live_evidence" },
  table_mode: {
    carries: "table_published events whose mode moved to or from degraded or panic",
    matches: (e) => tableModeChange(e) !== null,
  },
  // What a relay can fake (docs/scoring.md#what-a-relay-can-fake): pushed both ways, like a recovery.
  fingerprint: {
    carries: "fingerprint events (a line's short answers left its own or its paid peers' anchors, or came back)",
    matches: (e) => e.kind === "fingerprint",
  },
  usage: {
    carries: "usage events (a line's usage check started or stopped failing: billing evidence)",
    matches: (e) => e.kind === "usage",
  },
  shape_change: { carries: "shape_change events (the answers' protocol shape changed)", matches: (e) => e.kind === "shape_change" },
};

/** The webhook kinds an event belongs to, the narrowest first (e.g. fail_safe before state_change); empty: none. */
export function webhookKindsOf(event: TimelineEvent): WebhookEventKind[] {
  const kinds = WEBHOOK_EVENT_KINDS.filter((k) => WEBHOOK_KIND_RULES[k].matches(event));
  const narrower = kinds.filter((k) => WEBHOOK_KIND_RULES[k].narrows !== undefined);
  return [...narrower, ...kinds.filter((k) => WEBHOOK_KIND_RULES[k].narrows === undefined)];
}
